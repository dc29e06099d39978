const RETRIABLE = new Set([408, 429, 500, 502, 503, 504]);

export function isSuccessStatus(status?: number): boolean {
  return status !== undefined && status >= 200 && status < 300;
}

/** The default retry-eligible statuses: 408, 429, 500, 502, 503, 504. */
export function isRetriableStatus(status?: number): boolean {
  return status !== undefined && RETRIABLE.has(status);
}
