/**
 * Parses a Retry-After value into milliseconds: delta-seconds (`"120"`) or an HTTP date, measured
 * from `now`. A date in the past is 0. Returns -1 when absent or unparsable.
 */
export function parseRetryAfter(
  value: string | null | undefined,
  now: number = Date.now(),
): number {
  if (value === null || value === undefined) return -1;
  const v = value.trim();
  if (v === '') return -1;
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  // Only accept things that look like dates; Date.parse accepts odd strings such as "1".
  if (!/[a-zA-Z]/.test(v)) return -1;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return -1;
  return Math.max(0, at - now);
}
