/**
 * Parses a Retry-After value into milliseconds: delta-seconds (`"120"`) or an HTTP date, measured
 * from `now`. A date in the past is 0. Returns -1 when absent or unparsable. Delta-seconds past
 * 2^31 are taken as 2^31 s, as RFC 9111 (1.2.2) tells a cache to: hundreds of digits would be
 * Infinity.
 */
export function parseRetryAfter(
  value: string | null | undefined,
  now: number = Date.now(),
): number {
  const v = (value ?? '').trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Math.min(Number(v), 2 ** 31) * 1000);
  // Only what has the time of day every HTTP-date form writes (hh:mm:ss): Date.parse reads
  // garbage such as "soon 5" as a date (2001, a wait of 0) and "1" too.
  // An HTTP date is UTC, but asctime (`Sun Nov  6 08:49:37 1994`) says no zone, which
  // Date.parse would take as local time: it gets its GMT.
  const at = /\d:\d\d:\d/.test(v) ? Date.parse(/\d$/.test(v) ? `${v} GMT` : v) : NaN;
  return Number.isNaN(at) ? -1 : Math.max(0, at - now);
}
