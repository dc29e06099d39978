import {
  isCancelledError,
  isCircuitOpenError,
  isHttpError,
  isNetworkError,
  isTimeoutError,
} from '@keel/core';
import { type Collection, collectionOf, errorSummary, functionLabel, labelOf } from './values';

/** A duration for people: `850 ms`, `1.2 s`, `42 s`, `3 min`, `2 h`. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '∞';
  const abs = Math.abs(ms);
  if (abs < 1000) return `${Math.round(ms)} ms`;
  if (abs < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (abs < 120_000) return `${Math.round(ms / 1000)} s`;
  if (abs < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 3_600_000)} h`;
}

/** A ratio as a whole percentage (`—` when nothing was counted). */
export function formatPercent(part: number, whole: number): string {
  if (whole <= 0) return '—';
  return `${Math.round((part / whole) * 100)}%`;
}

/** Rows a table or list draws at most; the rest are counted (filters narrow what is drawn). */
export const MAX_ROWS = 200;

/**
 * Characters of a name, tag, header, event id or error that the panel shows: a peer or an app
 * can make any of them megabytes long, and each is drawn on every refresh.
 */
export const MAX_TEXT = 1_000;

/**
 * Headers whose values are credentials: the panel shows that they are there, not what they
 * hold (a screenshot or a screen share of the panel must not leak a session).
 */
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie']);

/** A header value for display: `hidden (n characters)` for a credential, cut past MAX_TEXT. */
export function headerValue(name: string, value: string): string {
  return SECRET_HEADERS.has(name.toLowerCase())
    ? `hidden (${value.length} characters)`
    : preview(value, MAX_TEXT);
}

/** Credential headers written into a key (`|h authorization:…`), up to the next header or block. */
const SECRET_IN_KEY =
  /(\n| \|h )(authorization|proxy-authorization|cookie|set-cookie):[^\n]*?(?=\n| \|[br] |$)/gi;

/** Characters of a key's URL, or of its header and body block, that the panel shows. */
const MAX_KEY = 1_000;

/**
 * A cache or dedup key for display: the values of credential headers in it are hidden, and a
 * key longer than a few URLs is cut.
 */
export function displayKey(key: string): string {
  return preview(
    key.includes(' |h ') ? key.replace(SECRET_IN_KEY, '$1$2:hidden') : key,
    3 * MAX_KEY,
  );
}

/** A cache or dedup key split for display: `GET /todos`, then its header / body block, if any. */
export function keyParts(rawKey: string): { method: string; url: string; extra: string } {
  const key = rawKey.includes(' |h ') ? rawKey.replace(SECRET_IN_KEY, '$1$2:hidden') : rawKey;
  const space = key.indexOf(' ');
  const rest = key.slice(space + 1);
  const mark = rest.indexOf(' |');
  // Cut, so a hostile megabyte-long URL or body costs the panel no more than a long one.
  return {
    method: key.slice(0, space),
    url: preview(mark === -1 ? rest : rest.slice(0, mark), MAX_KEY),
    extra: mark === -1 ? '' : preview(rest.slice(mark + 2).replace(/\n/g, ', '), MAX_KEY),
  };
}

/**
 * What went wrong, in a few words: `HTTP 503`, `timeout (attempt)`, `network error (ECONNRESET)`,
 * cut past MAX_TEXT characters.
 * Never throws: a hostile value thrown (a revoked Proxy, an object whose `message` getter
 * throws) is `an unreadable value`, so a listener or a view calling this cannot fail with it.
 */
export function describeError(error: unknown): string {
  try {
    // Cut: a message or a platform code can be any length (a fetch's, a validator's).
    return preview(describe(error), MAX_TEXT);
  } catch {
    return 'an unreadable value';
  }
}

function describe(error: unknown): string {
  if (isHttpError(error)) {
    return error.statusText ? `HTTP ${error.status} ${error.statusText}` : `HTTP ${error.status}`;
  }
  if (isTimeoutError(error)) {
    const kind = (error as { kind?: string }).kind;
    return kind ? `timeout (${kind})` : 'timeout';
  }
  if (isNetworkError(error)) return error.code ? `network error (${error.code})` : 'network error';
  // Guards, not instanceof: the app may carry a second copy of @keel/core.
  if (isCircuitOpenError(error)) return 'circuit open';
  if (isCancelledError(error)) return 'cancelled';
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

/** What a value that threw while read is shown as: `[unreadable: Error: boom]`. */
export function unreadable(error: unknown): string {
  return `[unreadable: ${preview(describeError(error), 200)}]`;
}

/** A clock time as `hh:mm:ss` (local time). */
export function formatClock(at: number): string {
  const d = new Date(at);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/**
 * A short preview of any value: JSON cut at `max` characters (a string as it is). The value is
 * walked only until `max` characters are written, so a huge one costs what a small one does, and
 * what JSON refuses, leaves out or has no word for is shown as the data tree shows it: a cycle as
 * `[circular]`, a BigInt as its digits, `undefined`, `NaN`, `ƒ load()`, `Symbol(s)` (in a list
 * and as an object's value alike), a part that throws while read (a getter, a revoked Proxy) as
 * `[unreadable]`, `Map(2){"a":1,2:"b"}`, `Set(1)["x"]`, `Uint8Array(2)[1,2]`, a Date's ISO string,
 * a RegExp's literal, `TypeError: boom` (values.ts reads them, for the tree as well). No method of
 * the value's own is called: an object with a `toJSON` shows its keys, as in the tree.
 */
export function preview(value: unknown, max = 120): string {
  if (typeof value === 'string') return cutTo(value, max);
  const out: Budget = { parts: [], length: 0, max };
  write(value, out, []);
  return cutTo(out.parts.join(''), max);
}

/**
 * A Map key as the data tree names it and the preview writes it: a string quoted (`"1"` is not
 * `1`), an object as short JSON, a function as its name, `[unreadable]` when it throws.
 */
export function previewKey(key: unknown, max: number): string {
  const out: Budget = { parts: [], length: 0, max };
  write(key, out, []);
  return cutTo(out.parts.join(''), max);
}

function cutTo(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The text written so far; full once it is longer than `max` (so a cut always shows). */
interface Budget {
  parts: string[];
  length: number;
  readonly max: number;
}

function put(out: Budget, text: string): void {
  out.parts.push(text);
  out.length += text.length;
}

/**
 * The data tree's text of `value` on one line, stopping once `out` is full. A part that throws
 * while read is written `[unreadable]` and the walk goes on with its siblings.
 */
function write(value: unknown, out: Budget, ancestors: object[]): void {
  if (out.length > out.max) return;
  const depth = ancestors.length;
  try {
    writeValue(value, out, ancestors);
  } catch {
    ancestors.length = depth;
    put(out, '[unreadable]');
  }
}

function writeValue(value: unknown, out: Budget, ancestors: object[]): void {
  if (typeof value === 'string') put(out, quote(value, out));
  else if (typeof value === 'function') put(out, functionLabel(value));
  // As the tree's leaves: `undefined`, `NaN`, `-Infinity`, a BigInt's digits, `Symbol(s)`.
  else if (value === null || typeof value !== 'object') put(out, String(value));
  else if (ancestors.includes(value)) put(out, '[circular]');
  else {
    // Built-ins first, read by their own methods: a subclass's toJSON or size is not called.
    const label = labelOf(value) ?? errorSummary(value);
    if (label !== undefined) put(out, label);
    else writeBranch(value, out, ancestors);
  }
}

/** A Map, a Set, a typed array, a list or an object: its entries, as far as `out` has room. */
function writeBranch(value: object, out: Budget, ancestors: object[]): void {
  ancestors.push(value);
  const collection = collectionOf(value);
  if (collection !== undefined) writeEntries(collection, out, ancestors);
  else if (Array.isArray(value)) {
    put(out, '[');
    for (let i = 0; i < value.length && out.length <= out.max; i++) {
      if (i > 0) put(out, ',');
      const item = read(value, i);
      if (item === UNREADABLE) put(out, '[unreadable]');
      else write(item, out, ancestors);
    }
    put(out, ']');
  } else {
    put(out, '{');
    let first = true;
    for (const key in value) {
      if (out.length > out.max) break;
      if (!Object.hasOwn(value, key)) continue;
      const item = read(value, key);
      put(out, first ? quote(key, out) : `,${quote(key, out)}`);
      put(out, ':');
      first = false;
      if (item === UNREADABLE) put(out, '[unreadable]');
      else write(item, out, ancestors);
    }
    put(out, '}');
  }
  ancestors.pop();
}

/**
 * `Map(2){"a":1,2:"b"}`, `Set(2)["x",1]`, `Uint8Array(2)[1,2]` (`Map(0)` when empty), read from
 * the built-in iterator only as far as `out` has room; a key as the tree names it.
 */
function writeEntries(collection: Collection, out: Budget, ancestors: object[]): void {
  const { name, size, keyed } = collection;
  put(out, `${name}(${size})`);
  if (!(size > 0)) return;
  put(out, keyed ? '{' : '[');
  const entries = collection.entries();
  for (let i = 0; out.length <= out.max; i++) {
    const step = entries.next();
    if (step.done) break;
    if (i > 0) put(out, ',');
    const [key, item] = step.value;
    if (keyed) {
      write(key, out, ancestors);
      put(out, ':');
    }
    write(item, out, ancestors);
  }
  put(out, keyed ? '}' : ']');
}

const UNREADABLE: unique symbol = Symbol('unreadable');

/** `value[key]`, or UNREADABLE when reading it throws (a getter, a Proxy trap). */
function read(value: object, key: string | number): unknown {
  try {
    return (value as Record<string | number, unknown>)[key];
  } catch {
    return UNREADABLE;
  }
}

/** A JSON string, quoted from a slice: a megabyte-long string is not copied whole. */
function quote(text: string, out: Budget): string {
  return JSON.stringify(text.length > out.max ? text.slice(0, out.max) : text);
}
