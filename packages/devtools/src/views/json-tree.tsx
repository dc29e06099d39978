import { memo, type ReactNode, useState } from 'react';
import { previewKey, unreadable } from '../format';
import { collectionOf, errorSummary, functionLabel, labelOf } from '../values';

/** Children shown per object, list, Map or Set before a "… n more" line (a huge one stays cheap). */
const MAX_CHILDREN = 100;
/** Characters of a string shown before a "… n more characters" mark (a huge body stays cheap). */
const MAX_STRING = 1_000;

/**
 * A response body as a collapsible tree: objects and arrays are `<details>` elements, so they
 * open and close with the keyboard (Enter / Space on the summary) without any script of ours.
 * The first `openDepth` levels start open (two: a list of objects shows its objects). What JSON
 * has no word for shows as a developer reads it: a Map's entries, a Set's values, a Date's ISO
 * string, a RegExp's literal, an Error's message and fields; bodies that are not data (bytes, a
 * stream) say what they are. Memoised on the value: the views re-render on every
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
  const { summary, size, children } = branch;
  if (size === 0) {
    return (
      <div className="kdt-json-row">
        {label}
        <span className="kdt-json-literal">{summary}</span>
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
          {/* By position: two Map keys can read alike. */}
          {children().map(([k, v], i) => (
            <Node
              // biome-ignore lint/suspicious/noArrayIndexKey: a value's children do not move
              key={i}
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

/** An object drawn as a branch: what it says closed (or empty), and its first children. */
interface Branch {
  /** `Array(3)`, `{2 keys}`, `Map(5)`, `TypeError: boom`; `[]`, `{}`, `Set(0)` when empty. */
  readonly summary: string;
  readonly size: number;
  /** The first MAX_CHILDREN children as `[name, value]`, read when the branch opens. */
  readonly children: () => (readonly [string, unknown])[];
}

/**
 * How an object is drawn as a branch; undefined for a leaf (bytes, a stream, a Date, a RegExp).
 * Reading hostile data throws (a revoked Proxy throws on every operation, a getter may throw):
 * the object, or the one child, is then Unreadable and the rest of the tree is drawn. Built-ins
 * are read as the event preview reads them (values.ts: their own methods, not a subclass's), and
 * a Map, Set or typed array only as far as the branch shows it.
 */
function branchOf(value: object): Branch | Unreadable | undefined {
  try {
    if (labelOf(value) !== undefined) return undefined;
    const collection = collectionOf(value);
    if (collection !== undefined) {
      const { name, size, keyed } = collection;
      return {
        summary: `${name}(${size})`,
        size,
        children: () => {
          const out: (readonly [string, unknown])[] = [];
          const entries = collection.entries();
          for (let step = entries.next(); !step.done && out.length < MAX_CHILDREN; ) {
            const [k, v] = step.value;
            out.push([keyed ? previewKey(k, MAX_STRING) : String(out.length), v]);
            step = entries.next();
          }
          return out;
        },
      };
    }
    if (Array.isArray(value)) {
      const size = value.length;
      return {
        summary: size === 0 ? '[]' : `Array(${size})`,
        size,
        children: () =>
          Array.from({ length: Math.min(size, MAX_CHILDREN) }, (_, i) => [
            String(i),
            readChild(value, i),
          ]),
      };
    }
    // An Error's message, stack and cause are its own but not enumerable.
    const error = errorSummary(value);
    const keys = error !== undefined ? Object.getOwnPropertyNames(value) : Object.keys(value);
    const size = keys.length;
    return {
      summary: error ?? (size === 0 ? '{}' : `{${size} ${size === 1 ? 'key' : 'keys'}}`),
      size,
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
  let className = 'kdt-muted';
  try {
    label =
      typeof value === 'function'
        ? functionLabel(value)
        : (typeof value === 'object' && labelOf(value)) || String(value);
    if (value instanceof Date || value instanceof RegExp) className = 'kdt-json-literal';
  } catch (error) {
    label = unreadable(error);
  }
  return <span className={className}>{label}</span>;
}
