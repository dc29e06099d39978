import { memo, type ReactNode, useState } from 'react';

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
        <span className="kdt-json-key">{name}</span>:{' '}
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
  if (value !== null && typeof value === 'object' && !isOpaque(value)) {
    const entries = Array.isArray(value)
      ? value.map((v, i) => [String(i), v] as const)
      : Object.entries(value as Record<string, unknown>);
    const summary = Array.isArray(value)
      ? `Array(${value.length})`
      : `{${entries.length} ${entries.length === 1 ? 'key' : 'keys'}}`;
    if (entries.length === 0) {
      return (
        <div className="kdt-json-row">
          {label}
          <span className="kdt-json-literal">{Array.isArray(value) ? '[]' : '{}'}</span>
        </div>
      );
    }
    const inner = [...ancestors, value];
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
            {entries.slice(0, MAX_CHILDREN).map(([k, v]) => (
              <Node
                key={k}
                name={k}
                value={v}
                depth={depth + 1}
                openDepth={openDepth}
                ancestors={inner}
              />
            ))}
            {entries.length > MAX_CHILDREN ? (
              <div className="kdt-json-row kdt-muted">… {entries.length - MAX_CHILDREN} more</div>
            ) : null}
          </>
        )}
      </Disclosure>
    );
  }
  return (
    <div className="kdt-json-row">
      {label}
      <Leaf value={value} />
    </div>
  );
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
  return <span className="kdt-muted">{opaqueLabel(value)}</span>;
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
  return String(value);
}
