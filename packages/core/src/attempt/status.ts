const RETRIABLE = new Set([408, 429, 500, 502, 503, 504]);

export function isSuccessStatus(status?: number): boolean {
  // undefined compares false.
  return (status as number) >= 200 && (status as number) < 300;
}

/** The default retry-eligible statuses: 408, 429, 500, 502, 503, 504. */
export function isRetriableStatus(status?: number): boolean {
  return RETRIABLE.has(status as number);
}
