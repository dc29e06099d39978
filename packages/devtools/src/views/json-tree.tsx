import type { ReactNode } from 'react';

/** Children shown per object or array before a "… n more" line (a huge list stays cheap). */
const MAX_CHILDREN = 100;

/**
 * A response body as a collapsible tree: objects and arrays are `<details>` elements, so they
 * open and close with the keyboard (Enter / Space on the summary) without any script of ours.
 * The first `openDepth` levels start open (two: a list of objects shows its objects). Bodies
 * that are not JSON say what they are.
 */
export function JsonTree({ value, openDepth = 2 }: { value: unknown; openDepth?: number }) {
  return (
    <div className="kdt-json">
      <Node name={undefined} value={value} depth={0} openDepth={openDepth} />
    </div>
  );
}

function Node({
  name,
  value,
  depth,
  openDepth,
}: {
  name: string | undefined;
  value: unknown;
  depth: number;
  openDepth: number;
}): ReactNode {
  const label =
    name === undefined ? null : (
      <>
        <span className="kdt-json-key">{name}</span>:{' '}
      </>
    );
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
    return (
      <details open={depth < openDepth}>
        <summary>
          {label}
          <span className="kdt-muted">{summary}</span>
        </summary>
        {entries.slice(0, MAX_CHILDREN).map(([k, v]) => (
          <Node key={k} name={k} value={v} depth={depth + 1} openDepth={openDepth} />
        ))}
        {entries.length > MAX_CHILDREN ? (
          <div className="kdt-json-row kdt-muted">… {entries.length - MAX_CHILDREN} more</div>
        ) : null}
      </details>
    );
  }
  return (
    <div className="kdt-json-row">
      {label}
      <Leaf value={value} />
    </div>
  );
}

function Leaf({ value }: { value: unknown }): ReactNode {
  if (typeof value === 'string')
    return <span className="kdt-json-string">{JSON.stringify(value)}</span>;
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
