import { memo, type ReactNode, useState } from 'react';
import { unreadable } from '../format';

/** Children shown per object or array before a "… n more" line (a huge list stays cheap). */
const MAX_CHILDREN = 100;
/** Characters of a string shown before a "… n more characters" mark (a huge body stays cheap). */
const MAX_STRING = 1_000;

/**
 * A response body as a collapsible tree: objects and arrays are `<details>` elements, so they
 * open and close with the keyboard (Enter / Space on the summary) without any script of ours.
 * The first `openDepth` levels start open (two: a list of objects shows its objects). Bodies
 * that are not JSON say what they are. Memoised on the value: the views re-render on every
 * change and every second, and a response's data does not change (a new response is a new value).
 */
export const JsonTree = memo(function JsonTree({
  value,
  openDepth = 2,
}: {
  value: unknown;
  openDepth?: number;
}) {
  return (
    <div className="kdt-json">
      <Node name={undefined} value={value} depth={0} openDepth={openDepth} ancestors={[]} />
    </div>
  );
});

function Node({
  name,
  value,
  depth,
  openDepth,
  ancestors,
}: {
  name: string | undefined;
  value: unknown;
  depth: number;
  openDepth: number;
  /** The objects above this one: a value that is one of them is a cycle, not walked again. */
  ancestors: readonly object[];
}): ReactNode {
  const label =
    name === undefined ? null : (
      <>
        <span className="kdt-json-key">{cut(name)}</span>:{' '}
      </>
    );
  if (value !== null && typeof value === 'object' && ancestors.includes(value)) {
    return (
      <div className="kdt-json-row">
        {label}
        <span className="kdt-muted">[circular]</span>
      </div>
    );
  }
  const branch =
    value !== null && typeof value === 'object' && !isUnreadable(value)
      ? branchOf(value)
      : undefined;
  if (branch === undefined || isUnreadable(branch)) {
    return (
      <div className="kdt-json-row">
        {label}
        <Leaf value={branch ?? value} />
      </div>
    );
  }
  const { isArray, size, children } = branch;
  const summary = isArray ? `Array(${size})` : `{${size} ${size === 1 ? 'key' : 'keys'}}`;
  if (size === 0) {
    return (
      <div className="kdt-json-row">
        {label}
        <span className="kdt-json-literal">{isArray ? '[]' : '{}'}</span>
      </div>
    );
  }
  const inner = [...ancestors, value as object];
  return (
    <Disclosure
      initiallyOpen={depth < openDepth}
      summary={
        <>
          {label}
          <span className="kdt-muted">{summary}</span>
        </>
      }
    >
      {() => (
        <>
          {children().map(([k, v]) => (
            <Node
              key={k}
              name={k}
              value={v}
              depth={depth + 1}
              openDepth={openDepth}
              ancestors={inner}
            />
          ))}
          {size > MAX_CHILDREN ? (
            <div className="kdt-json-row kdt-muted">… {size - MAX_CHILDREN} more</div>
          ) : null}
        </>
      )}
    </Disclosure>
  );
}

/** A value that threw while the tree read it (a getter, a revoked Proxy). */
class Unreadable {
  constructor(readonly error: unknown) {
    unreadables.add(this);
  }
}

/**
 * The Unreadable instances: a WeakSet, not `instanceof`, which asks a value for its prototype
 * (and a revoked Proxy throws on that).
 */
const unreadables = new WeakSet<object>();

function isUnreadable(value: unknown): value is Unreadable {
  return typeof value === 'object' && value !== null && unreadables.has(value);
}

/**
 * How an object is drawn as a branch: its size now, its first MAX_CHILDREN children read when
 * the branch opens; undefined for an opaque body (bytes, a stream), a leaf. Reading hostile
 * data throws (a revoked Proxy throws on every operation, a getter may throw): the object, or
 * the one child, is then Unreadable and the rest of the tree is drawn.
 */
function branchOf(
  value: object,
):
  | { isArray: boolean; size: number; children: () => (readonly [string, unknown])[] }
  | Unreadable
  | undefined {
  try {
    if (isOpaque(value)) return undefined;
    if (Array.isArray(value)) {
      const list: readonly unknown[] = value;
      return {
        isArray: true,
        size: list.length,
        children: () =>
          Array.from({ length: Math.min(list.length, MAX_CHILDREN) }, (_, i) => [
            String(i),
            readChild(list, i),
          ]),
      };
    }
    const keys = Object.keys(value);
    return {
      isArray: false,
      size: keys.length,
      children: () =>
        keys.slice(0, MAX_CHILDREN).map((key) => [key, readChild(value, key)] as const),
    };
  } catch (error) {
    return new Unreadable(error);
  }
}

function readChild(value: object, key: string | number): unknown {
  try {
    return (value as Record<string | number, unknown>)[key];
  } catch (error) {
    return new Unreadable(error);
  }
}

/** A key for display: a megabyte-long one costs what a long one does. */
function cut(key: string): string {
  return key.length > MAX_STRING ? `${key.slice(0, MAX_STRING)}…` : key;
}

/**
 * A `<details>` whose content is rendered only while it is open: a closed branch of a data tree,
 * or a closed event, costs one element however big the value under it (100 keys on 4 levels
 * would otherwise be 100 million nodes).
 */
export function Disclosure({
  initiallyOpen = false,
  summary,
  children,
}: {
  initiallyOpen?: boolean;
  summary: ReactNode;
  children: () => ReactNode;
}) {
  const [open, setOpen] = useState(initiallyOpen);
  return (
    // The click (Enter and Space on a summary are clicks) opens it in this render; the toggle
    // event, which the browser fires a task later, covers the other ways (find in page).
    <details open={open} onToggle={(event) => setOpen(event.currentTarget.open)}>
      {/* biome-ignore lint/a11y/noStaticElementInteractions: a summary is the native disclosure control (focusable, Enter and Space click it) */}
      <summary
        onClick={(event) => {
          event.preventDefault();
          setOpen((was) => !was);
        }}
      >
        {summary}
      </summary>
      {open ? children() : null}
    </details>
  );
}

function Leaf({ value }: { value: unknown }): ReactNode {
  if (isUnreadable(value)) return <span className="kdt-muted">{unreadable(value.error)}</span>;
  if (typeof value === 'string') {
    if (value.length <= MAX_STRING) {
      return <span className="kdt-json-string">{JSON.stringify(value)}</span>;
    }
    return (
      <>
        <span className="kdt-json-string">{JSON.stringify(value.slice(0, MAX_STRING))}</span>
        <span className="kdt-muted"> … {value.length - MAX_STRING} more characters</span>
      </>
    );
  }
  if (typeof value === 'number' || typeof value === 'bigint') {
    return <span className="kdt-json-number">{String(value)}</span>;
  }
  if (value === null || value === undefined || typeof value === 'boolean') {
    return <span className="kdt-json-literal">{String(value)}</span>;
  }
  let label: string;
  try {
    label = opaqueLabel(value);
  } catch (error) {
    label = unreadable(error);
  }
  return <span className="kdt-muted">{label}</span>;
}

/** Bodies that are not data to walk: binary, streams, blobs. */
function isOpaque(value: object): boolean {
  return (
    value instanceof ArrayBuffer ||
    ArrayBuffer.isView(value) ||
    (typeof Blob !== 'undefined' && value instanceof Blob) ||
    (typeof ReadableStream !== 'undefined' && value instanceof ReadableStream)
  );
}

function opaqueLabel(value: unknown): string {
  if (value instanceof ArrayBuffer) return `ArrayBuffer (${value.byteLength} bytes)`;
  if (ArrayBuffer.isView(value)) return `${value.constructor.name} (${value.byteLength} bytes)`;
  if (typeof Blob !== 'undefined' && value instanceof Blob) {
    return `Blob (${value.size} bytes${value.type ? `, ${value.type}` : ''})`;
  }
  if (typeof ReadableStream !== 'undefined' && value instanceof ReadableStream)
    return 'ReadableStream';
  // A function's source can be any length: its name says enough.
  if (typeof value === 'function') return `ƒ ${cut(value.name) || 'anonymous'}()`;
  return String(value);
}
