import type { ResolvedAdaptiveOptions } from './options';

/** The signals a window is judged on, read from the rings when the window closes. */
export interface WindowSignals {
  /** NaN when there is no latency sample: such a window is never healthy, slow or pressured on latency. */
  p95: number;
  errors: number;
  rateLimited: number;
  /** Outcomes in the window (the outcome ring's contents). */
  outcomes: number;
}

/** Why a window is pressured, in the order reasons are reported. */
export type PressureCause = 'latency' | 'rateLimit' | 'errors';

/**
 * The verdict on one closed window (concurrency rule 1):
 * - `pressured`: p95 >= highLatencyMs, or 429 share >= rateLimitRatio, or error share >=
 *   errorRatio. Pressure wins over a low p95: fast 429s are still pressure.
 * - `healthy`: not pressured and p95 < lowLatencyMs (so never without a latency sample: a
 *   window of successes the clock could not time is no evidence for raising the ceiling).
 * - `deadband`: neither; nothing moves, and both streaks are broken.
 * `rateLimited` (429 pressure) drives the throttle table independently of the kind.
 */
export interface WindowVerdict {
  kind: 'pressured' | 'healthy' | 'deadband';
  causes: readonly PressureCause[];
  rateLimited: boolean;
  /** p95 >= swrLatencyMs (meaningful only with the staleWhileRevalidate switch). */
  slow: boolean;
  signals: Readonly<WindowSignals>;
}

/**
 * Judges a window. A share only counts as pressure when at least one such outcome occurred, so
 * a ratio of 0 means "any 429 (or error) is pressure" rather than "every window is pressure".
 */
export function judgeWindow(s: WindowSignals, o: ResolvedAdaptiveOptions): WindowVerdict {
  const causes: PressureCause[] = [];
  if (s.p95 >= o.highLatencyMs) causes.push('latency');
  const rateLimited = s.rateLimited > 0 && s.rateLimited / s.outcomes >= o.rateLimitRatio;
  if (rateLimited) causes.push('rateLimit');
  if (s.errors > 0 && s.errors / s.outcomes >= o.errorRatio) causes.push('errors');
  const kind = causes.length > 0 ? 'pressured' : s.p95 < o.lowLatencyMs ? 'healthy' : 'deadband';
  return { kind, causes, rateLimited, slow: s.p95 >= o.swrLatencyMs, signals: s };
}
