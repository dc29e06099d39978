import type { ApiResponse, CachedEntryView, Client, ClientInspector } from '@keel/core';
import { useCallback, useId, useState } from 'react';
import {
  displayKey,
  formatMs,
  headerValue,
  keyParts,
  MAX_ROWS,
  MAX_TEXT,
  preview,
  unreadable,
} from '../format';
import { onEvents, useRefresh, useTick } from '../live/refresh';
import { JsonTree } from './json-tree';

/** Events after which `fetching` may have changed (the cache watcher hears the writes). */
const FETCH_EVENTS = ['request', 'success', 'error', 'cancel'] as const;

/**
 * The Cache view: every cached response with its age, freshness, subscribers and tags; select
 * one to see its data and headers, and invalidate, refetch or remove it. It reads
 * `inspect(client).cache()` and re-reads on every cache change (`watchCache`, which is no
 * interest in any key) and on flight events; a one-second tick moves ages along.
 */
export function CacheView({ client, inspector }: { client: Client; inspector: ClientInspector }) {
  const subscribe = useCallback(
    (changed: () => void) => {
      const unwatch = inspector.watchCache(changed);
      const off = onEvents(client, FETCH_EVENTS, changed);
      return () => {
        unwatch();
        off();
      };
    },
    [client, inspector],
  );
  useRefresh(subscribe);
  useTick(client, 1000);
  const [filter, setFilter] = useState('');
  const [selected, setSelected] = useState<string | null>(null);
  const filterId = useId();

  const entries = inspector.cache();
  const needle = filter.trim().toLowerCase();
  const shown = needle === '' ? entries : entries.filter((e) => matches(e, needle));
  const current = entries.find((e) => e.key === selected);

  if (entries.length === 0) {
    return (
      <div className="kdt-view">
        <div className="kdt-empty">
          <strong>Nothing cached yet</strong>
          GET responses are kept here as they arrive (for <code>cache.ttl</code>, 30 s by default),
          with who is subscribed to each. Run a query and it shows up.
        </div>
      </div>
    );
  }

  return (
    <div className="kdt-view">
      <div className="kdt-toolbar">
        <label className="kdt-sr" htmlFor={filterId}>
          Filter cache keys
        </label>
        <input
          id={filterId}
          className="kdt-input"
          type="search"
          placeholder="Filter keys or tags"
          value={filter}
          onChange={(event) => setFilter(event.target.value)}
        />
        <span className="kdt-muted">
          {shown.length} of {entries.length} {entries.length === 1 ? 'entry' : 'entries'} ·{' '}
          {entries.filter((e) => e.fresh).length} fresh
        </span>
      </div>
      <div className="kdt-cache">
        <div className="kdt-table-wrap">
          <table className="kdt-table" aria-label="Cached responses">
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">State</th>
                <th scope="col" className="kdt-num">
                  Age
                </th>
                <th scope="col" className="kdt-num" title="Subscribers">
                  Subs
                </th>
                <th scope="col">Tags</th>
              </tr>
            </thead>
            <tbody>
              {shown.slice(0, MAX_ROWS).map((entry) => {
                const parts = keyParts(entry.key);
                const isSelected = entry.key === selected;
                return (
                  <tr key={entry.key} aria-selected={isSelected}>
                    <td>
                      <button
                        type="button"
                        className="kdt-row-button"
                        aria-pressed={isSelected}
                        onClick={() => setSelected(isSelected ? null : entry.key)}
                      >
                        <span className="kdt-muted">{parts.method}</span> {parts.url}
                        {parts.extra ? <span className="kdt-muted"> | {parts.extra}</span> : null}
                      </button>
                    </td>
                    <td>
                      <Freshness entry={entry} />
                    </td>
                    <td className="kdt-num">{formatMs(entry.age)}</td>
                    <td className="kdt-num">{entry.subscribers}</td>
                    <td>
                      {entry.tags.map((tag, i) => (
                        // biome-ignore lint/suspicious/noArrayIndexKey: a tag can be given twice
                        <span key={i} className="kdt-tag">
                          {preview(tag, MAX_TEXT)}
                        </span>
                      ))}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {shown.length > MAX_ROWS ? (
            <p className="kdt-muted" style={{ margin: 8 }}>
              … {shown.length - MAX_ROWS} more not drawn: filter to find them.
            </p>
          ) : null}
        </div>
        {current ? (
          <EntryDetail client={client} entry={current} onRemoved={() => setSelected(null)} />
        ) : (
          <div className="kdt-detail kdt-muted">
            Select an entry to see its data and headers, and to invalidate, refetch or remove it.
          </div>
        )}
      </div>
    </div>
  );
}

function matches(entry: CachedEntryView, needle: string): boolean {
  return (
    entry.key.toLowerCase().includes(needle) ||
    entry.tags.some((tag) => tag.toLowerCase().includes(needle))
  );
}

function Freshness({ entry }: { entry: CachedEntryView }) {
  return (
    <>
      <span className="kdt-badge" data-tone={entry.fresh ? 'ok' : 'warn'}>
        {entry.fresh ? 'fresh' : 'stale'}
      </span>
      {entry.fetching ? (
        <>
          {' '}
          <span className="kdt-badge" data-tone="info" data-live="">
            fetching
          </span>
        </>
      ) : null}
    </>
  );
}

function EntryDetail({
  client,
  entry,
  onRemoved,
}: {
  client: Client;
  entry: CachedEntryView;
  onRemoved: () => void;
}) {
  const { spec } = entry;
  const { data, status, headers, headerCount, problem } = readResponse(entry.response);
  const key = displayKey(entry.key);
  const expiresIn = entry.expiresAt - (entry.storedAt + entry.age);
  return (
    <section className="kdt-detail" aria-label={`Cache entry ${key}`}>
      <h3>{key}</h3>
      <div className="kdt-actions">
        <button
          type="button"
          className="kdt-button kdt-button-primary"
          title="Remove it and fetch it again if a query shows it"
          onClick={() => client.invalidate((meta) => meta.key === entry.key)}
        >
          Invalidate
        </button>
        <button
          type="button"
          className="kdt-button"
          disabled={spec === undefined || entry.fetching}
          title={
            spec === undefined
              ? 'Written by hand with a key only: there is no request to send again'
              : 'Fetch it again now; the entry stays until the new response replaces it'
          }
          onClick={() => {
            if (spec !== undefined) client.prefetch(spec);
          }}
        >
          {entry.fetching ? 'Refetching…' : 'Refetch'}
        </button>
        <button
          type="button"
          className="kdt-button"
          title="Drop it from the cache without fetching it (a query showing it keeps its data; the next read fetches)"
          onClick={() => {
            client.setCached(entry.key, undefined);
            onRemoved();
          }}
        >
          Remove
        </button>
      </div>
      <dl className="kdt-facts">
        <dt>State</dt>
        <dd>
          <Freshness entry={entry} />{' '}
          <span className="kdt-muted">
            {expiresIn > 0 ? `for ${formatMs(expiresIn)} more` : `for ${formatMs(-expiresIn)}`}
          </span>
        </dd>
        <dt>Stored</dt>
        <dd>{formatMs(entry.age)} ago</dd>
        <dt>Subscribers</dt>
        <dd>
          {entry.subscribers === 0
            ? 'none (collected once stale and unwatched for gcTime)'
            : entry.subscribers}
        </dd>
        <dt>Tags</dt>
        <dd>
          {entry.tags.length === 0 ? (
            <span className="kdt-muted">none</span>
          ) : (
            entry.tags.map((tag) => preview(tag, MAX_TEXT)).join(', ')
          )}
        </dd>
        <dt>Response</dt>
        <dd>
          {status}
          {problem === undefined ? null : <span className="kdt-muted"> {problem}</span>}
        </dd>
      </dl>
      <h4>Data</h4>
      <JsonTree value={data} />
      <details open>
        <summary>
          <h4 style={{ display: 'inline' }}>Headers ({headerCount})</h4>
        </summary>
        {headers.length === 0 ? (
          <p className="kdt-muted">No headers.</p>
        ) : (
          <dl className="kdt-facts kdt-mono">
            {headers.map(([name, value], i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: a name can repeat (set-cookie); the list is rebuilt whole
              <div key={i} style={{ display: 'contents' }}>
                <dt>{name}</dt>
                <dd>{value}</dd>
              </div>
            ))}
            {headerCount > MAX_ROWS ? (
              <div className="kdt-muted" style={{ gridColumn: '1 / -1' }}>
                … {headerCount - MAX_ROWS} more not drawn.
              </div>
            ) : null}
          </dl>
        )}
      </details>
    </section>
  );
}

/** What the detail shows of a response: read once per render, never throwing. */
interface ResponseParts {
  data: unknown;
  /** `200 OK`; empty for an entry written as `{ data }`. */
  status: string;
  /** The first MAX_ROWS headers, for display; the rest are counted. */
  headers: [string, string][];
  headerCount: number;
  /** What threw while the response was read, as `[unreadable: …]`. */
  problem: string | undefined;
}

/**
 * Reads a cached response for display. An entry written by hand (`setCached`, `hydrate` of
 * state from elsewhere) can be anything typed as a response: a status that is an object,
 * headers whose `forEach` throws or yields non-strings, a revoked Proxy. What can be read is
 * shown and the rest is `[unreadable: …]`, so one odd entry cannot take the Cache view down.
 */
function readResponse(response: ApiResponse): ResponseParts {
  const parts: ResponseParts = {
    data: undefined,
    status: '',
    headers: [],
    headerCount: 0,
    problem: undefined,
  };
  try {
    parts.data = response.data;
    parts.status = [response.status, response.statusText]
      .filter((part) => part !== undefined)
      .map((part) => preview(part, MAX_TEXT))
      .join(' ');
    const { headers } = response;
    // An entry written by hand may be `{ data }` alone, without headers (see dehydrate).
    if (typeof headers?.forEach !== 'function') return parts;
    headers.forEach((value: unknown, name: unknown) => {
      if (parts.headerCount++ >= MAX_ROWS) return;
      const shown = preview(name, MAX_TEXT);
      parts.headers.push([
        shown,
        headerValue(shown, typeof value === 'string' ? value : preview(value, MAX_TEXT)),
      ]);
    });
  } catch (error) {
    parts.problem = unreadable(error);
  }
  return parts;
}
