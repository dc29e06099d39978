import {
  isCancelledError,
  isCircuitOpenError,
  isHttpError,
  isNetworkError,
  isTimeoutError,
} from '@keel/core';

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

/** A cache or dedup key split for display: `GET /todos`, then its header / body block, if any. */
export function keyParts(key: string): { method: string; url: string; extra: string } {
  const space = key.indexOf(' ');
  const rest = key.slice(space + 1);
  const mark = rest.indexOf(' |');
  return {
    method: key.slice(0, space),
    url: mark === -1 ? rest : rest.slice(0, mark),
    extra: mark === -1 ? '' : rest.slice(mark + 2).replace(/\n/g, ', '),
  };
}

/** What went wrong, in a few words: `HTTP 503`, `timeout (attempt)`, `network error (ECONNRESET)`. */
export function describeError(error: unknown): string {
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

/** A clock time as `hh:mm:ss` (local time). */
export function formatClock(at: number): string {
  const d = new Date(at);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/** A short preview of any value: JSON cut at `max` characters. */
export function preview(value: unknown, max = 120): string {
  let text: string;
  if (typeof value === 'string') text = value;
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
