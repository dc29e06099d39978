import { describe, expect, it } from 'vitest';
import { ADAPTIVE_DEFAULTS } from './options';
import { judgeWindow } from './window';

const o = ADAPTIVE_DEFAULTS; // high 2000, low 1000, 429 ratio 0.2, error ratio 0.1, swr 1500
const w = (p95: number, errors = 0, rateLimited = 0, outcomes = 10) =>
  judgeWindow({ p95, errors, rateLimited, outcomes }, o);

describe('judgeWindow', () => {
  it('p95 at or above highLatencyMs is pressured', () => {
    expect(w(2000)).toMatchObject({ kind: 'pressured', causes: ['latency'], rateLimited: false });
    expect(w(1999).kind).toBe('deadband');
  });

  it('p95 below lowLatencyMs is healthy; lowLatencyMs itself is in the deadband', () => {
    expect(w(999).kind).toBe('healthy');
    expect(w(1000).kind).toBe('deadband');
  });

  it('a 429 share at the ratio is pressure even when fast, and flags throttling', () => {
    expect(w(50, 0, 2)).toMatchObject({
      kind: 'pressured',
      causes: ['rateLimit'],
      rateLimited: true,
    });
    expect(w(50, 0, 1)).toMatchObject({ kind: 'healthy', rateLimited: false });
  });

  it('an error share at the ratio is pressure', () => {
    expect(w(50, 1)).toMatchObject({ kind: 'pressured', causes: ['errors'] });
    expect(w(50, 1, 0, 11).kind).toBe('healthy');
  });

  it('lists every cause, latency first', () => {
    expect(w(2500, 5, 5).causes).toEqual(['latency', 'rateLimit', 'errors']);
  });

  it('a zero ratio means any occurrence, not every window', () => {
    const zero = { ...o, rateLimitRatio: 0, errorRatio: 0 };
    const j = (errors: number, rateLimited: number) =>
      judgeWindow({ p95: 10, errors, rateLimited, outcomes: 10 }, zero);
    expect(j(0, 0).kind).toBe('healthy');
    expect(j(0, 1).causes).toEqual(['rateLimit']);
    expect(j(1, 0).causes).toEqual(['errors']);
  });

  it('no latency sample (p95 NaN): never healthy nor slow, still pressured by shares', () => {
    expect(w(Number.NaN)).toMatchObject({ kind: 'deadband', causes: [], slow: false });
    expect(w(Number.NaN, 1)).toMatchObject({ kind: 'pressured', causes: ['errors'] });
    expect(w(Number.NaN, 0, 2)).toMatchObject({ kind: 'pressured', rateLimited: true });
  });

  it('slow is p95 at or above swrLatencyMs', () => {
    expect(w(1500).slow).toBe(true);
    expect(w(1499).slow).toBe(false);
  });
});
