/**
 * Parses a Retry-After value into milliseconds: delta-seconds (`"120"`) or an HTTP date, measured
 * from `now`. A date in the past is 0. Returns -1 when absent or invalid, as RFC 9110 (10.2.3)
 * says an invalid value is ignored: a date is in GMT. Delta-seconds with a fraction (`0.25`, not
 * RFC 9110's whole digits) are honoured to the millisecond: a server asking for a shorter wait
 * than a second gets it (as ky and got read it), and ignoring it would retry at the backoff. Delta-seconds past 2^31 are taken as 2^31 s, as RFC 9111 (1.2.2) tells a cache to:
 * hundreds of digits would be Infinity.
 */
export function parseRetryAfter(
  value: string | null | undefined,
  now: number = Date.now(),
): number {
  const v = (value ?? '').trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Math.min(Number(v), 2 ** 31) * 1000);
  // Only what ends as every HTTP-date form does, its time of day then `GMT` (IMF-fixdate,
  // rfc850) or the year (asctime): Date.parse reads garbage such as "soon 5" as a date (2001, a
  // wait of 0), and an ISO date or another zone is no HTTP-date. asctime says no zone, which
  // Date.parse would take as local time: it gets its GMT.
  const at = /:\d\d (GMT|\d{4})$/.test(v) ? Date.parse(/\d$/.test(v) ? `${v} GMT` : v) : NaN;
  return Number.isNaN(at) ? -1 : Math.max(0, at - now);
}
