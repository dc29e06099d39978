/**
 * Parses a Retry-After value into milliseconds: delta-seconds (`"120"`) or an HTTP date in its
 * IMF-fixdate form (`Mon, 01 Jan 2024 12:00:05 GMT`), measured from `now`. A date in the past is
 * 0. Returns -1 when absent or invalid, as RFC 9110 (10.2.3) says an invalid value is ignored. Delta-seconds with a fraction (`0.25`, not
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
  // Only an IMF-fixdate, to the character (RFC 9110, 5.6.7): what toUTCString writes, so a date
  // must come back as it was. Date.parse reads garbage such as "5 12:00:05 GMT" as a date (2001:
  // a wait of 0), and takes an ISO date, another zone, a missing comma, any day name or Feb 31.
  // The obsolete rfc850 and asctime forms are ignored too: no sender may write them (RFC 2616
  // already said so), and an ignored value only means the backoff's wait.
  const at = Date.parse(v);
  return new Date(at).toUTCString() === v && !Number.isNaN(at) ? Math.max(0, at - now) : -1;
}
