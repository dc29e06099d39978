export interface DelayInput {
  /** Attempts made so far (1 after the first failure). */
  attempts: number;
  baseDelay: number;
  maxDelay: number;
  backoff: 'exponential' | 'fixed';
  jitter: boolean;
  /** Random source in [0, 1) (anything else is taken modulo 1; NaN is 0); default Math.random. */
  random?: (() => number) | undefined;
}

/**
 * The wait before the next attempt, in ms.
 *
 *   exponential: d = min(maxDelay, baseDelay * 2^(attempts - 1))
 *   fixed:       d = min(maxDelay, baseDelay)
 *   jitter:      d/2 + random * d/2   ("equal jitter": spreads clients apart, never below d/2;
 *                                      a random outside [0, 1) is taken modulo 1, NaN as 0)
 */
export function computeDelay({
  attempts,
  baseDelay,
  maxDelay,
  backoff,
  jitter,
  random = Math.random,
}: DelayInput): number {
  const n = Math.max(1, attempts);
  const raw = backoff === 'fixed' ? baseDelay : baseDelay * 2 ** (n - 1);
  // `|| 0`: a baseDelay of 0 grown past 2^1024 is 0 * Infinity, NaN.
  const d = Math.min(maxDelay, raw) || 0;
  if (!jitter) return d;
  const half = d / 2;
  // A user's random outside [0, 1) is taken modulo 1 (NaN, ±Infinity: 0): NaN was no wait at
  // all, 7 a wait 4x too long. `+ 1) % 1` maps a negative remainder into [0, 1) (-0.5 is 0.5),
  // so every wait stays in [d/2, d].
  return Math.round(half + (((random() % 1) + 1) % 1 || 0) * half);
}
