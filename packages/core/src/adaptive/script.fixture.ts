import type { AdaptiveOptions } from '../types/options';
import type { AdaptiveDecision } from './decision';
import { AdaptiveEngine } from './engine';
import { resolveAdaptiveOptions } from './options';
import type { Outcome } from './outcome-ring';

/**
 * Scripted signal sequences for the engine's tests: one letter per window, each window filled
 * with exactly `outcomeWindow` samples (so it closes), at 10 ms steps of a fake clock (or `step`).
 *
 *   S  slow      p95 3000 ms                       pressured (latency)
 *   R  429s      p95 100 ms, one 429 per 4          pressured (rate limit)
 *   E  errors    p95 100 ms, one error per 4        pressured (errors)
 *   F  fast      p95 100 ms                        healthy
 *   D  deadband  p95 1200 ms                       neither
 *   W  sWr-slow  p95 1700 ms                       deadband, but >= swrLatencyMs 1500
 *
 * Test-only; not exported from the package.
 */
export type WindowKind = 'S' | 'R' | 'E' | 'F' | 'D' | 'W';

const SHAPES: Record<WindowKind, { ms: number; odd: Outcome }> = {
  S: { ms: 3000, odd: 'took' },
  R: { ms: 100, odd: 'rateLimited' },
  E: { ms: 100, odd: 'error' },
  F: { ms: 100, odd: 'took' },
  D: { ms: 1200, odd: 'took' },
  W: { ms: 1700, odd: 'took' },
};

/** Small rings by default so each window is judged on its own samples only. */
export const SCRIPT_OPTIONS: AdaptiveOptions = {
  enabled: true,
  concurrency: true,
  latencyWindow: 4,
  outcomeWindow: 4,
};

export function scripted(
  options: AdaptiveOptions = {},
  /** null: no scheduler. */
  schedulerConcurrency: number | null = 4,
) {
  let now = 0;
  const log: AdaptiveDecision[] = [];
  const resolved = resolveAdaptiveOptions({ ...SCRIPT_OPTIONS, ...options });
  if (resolved === undefined) throw new Error('scripted: the engine must be enabled');
  const engine = new AdaptiveEngine({
    options: resolved,
    schedulerConcurrency: schedulerConcurrency ?? undefined,
    onDecision: (d) => log.push(d),
  });
  const size = resolved.outcomeWindow;
  /** One sample at the current time, as the observer tells one (an attempt started, ended). */
  const record = (endpoint: string, ms: number, outcome: Outcome) => {
    engine.started(endpoint, now);
    engine.ended(endpoint, ms, outcome, now);
  };
  return {
    engine,
    log,
    clock: {
      now: () => now,
      advance: (ms: number) => {
        now += ms;
      },
    },
    record,
    /** Plays windows for an endpoint, e.g. `play('GET /a', 'SSSFF')`, a sample every `step` ms. */
    play(endpoint: string, script: string, step = 10): void {
      for (const kind of script as Iterable<WindowKind>) {
        const shape = SHAPES[kind];
        if (shape === undefined) throw new Error(`scripted: unknown window kind ${kind}`);
        for (let i = 0; i < size; i++) {
          now += step;
          // One odd outcome in every 4 samples (share 0.25 on a 4-sample window).
          record(endpoint, shape.ms, i % 4 === 0 ? shape.odd : 'took');
        }
      }
    },
    /** The ceiling decisions as `from→to@window`, for compact assertions. */
    ceilings(endpoint?: string): string[] {
      return log
        .filter((d) => d.type === 'ceiling' && (endpoint === undefined || d.endpoint === endpoint))
        .map((d) => (d.type === 'ceiling' ? `${d.from}→${d.to}@${d.window}` : ''));
    },
  };
}
