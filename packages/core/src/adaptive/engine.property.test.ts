import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scripted } from './script.fixture';

const A = 'GET /a';
const B = 'GET /b';
const PRESSURED = new Set(['S', 'R', 'E']);

const setup = fc
  .record({
    configured: fc.integer({ min: 1, max: 12 }),
    floor: fc.integer({ min: 1, max: 12 }),
    degradeSamples: fc.integer({ min: 1, max: 4 }),
    recoverySamples: fc.integer({ min: 1, max: 4 }),
    changeCooldown: fc.integer({ min: 0, max: 4 }),
  })
  .map(({ floor, configured, ...rest }) => ({
    ...rest,
    configured,
    minConcurrency: Math.min(floor, configured),
  }));
const script = fc
  .array(fc.constantFrom('S', 'R', 'E', 'F', 'D', 'W'), { maxLength: 80 })
  .map((kinds) => kinds.join(''));

describe('adaptive ceiling properties', () => {
  it('stays within [minConcurrency, configured], moves by exactly 1, only as the rules allow', () => {
    fc.assert(
      fc.property(setup, script, ({ configured, ...options }, windows) => {
        const s = scripted({ ...options, rateLimit: true, staleWhileRevalidate: true }, configured);
        let effective = configured;
        let lastChange = Number.NEGATIVE_INFINITY;
        for (let w = 1; w <= windows.length; w++) {
          const before = s.log.length;
          s.play(A, windows[w - 1]!);
          const ceilings = s.log.slice(before).filter((d) => d.type === 'ceiling');
          expect(ceilings.length).toBeLessThanOrEqual(1);
          const state = s.engine.state(A)!;
          expect(state.effective).toBeGreaterThanOrEqual(options.minConcurrency);
          expect(state.effective).toBeLessThanOrEqual(configured);
          const d = ceilings[0];
          if (d === undefined || d.type !== 'ceiling') {
            expect(state.effective).toBe(effective); // the ceiling only moves by a decision
            continue;
          }
          expect(d.from).toBe(effective);
          expect(Math.abs(d.to - d.from)).toBe(1);
          expect(d.window).toBe(w);
          expect(w - lastChange).toBeGreaterThanOrEqual(options.changeCooldown);
          // The streak that justified it: the last N windows all pressured (or all healthy).
          const n = d.to < d.from ? options.degradeSamples : options.recoverySamples;
          const tail = windows.slice(w - n, w);
          expect(tail).toHaveLength(n);
          for (const k of tail) {
            if (d.to < d.from) expect(PRESSURED.has(k)).toBe(true);
            else expect(k).toBe('F');
          }
          effective = d.to;
          lastChange = w;
        }
        const m = s.engine.metrics();
        expect(m.decisions).toBe(m.concurrencyReductions + m.concurrencyRecoveries + m.throttles);
      }),
    );
  });

  it('is deterministic and isolates endpoints: B interleaved does not change A', () => {
    fc.assert(
      fc.property(setup, script, script, ({ configured, ...options }, forA, forB) => {
        const opts = { ...options, rateLimit: true, retry: true, staleWhileRevalidate: true };
        const alone = scripted(opts, configured);
        alone.play(A, forA);
        const mixed = scripted(opts, configured);
        const n = Math.max(forA.length, forB.length);
        for (let i = 0; i < n; i++) {
          if (i < forB.length) mixed.play(B, forB[i]!);
          if (i < forA.length) mixed.play(A, forA[i]!);
        }
        // Decision times differ (the clock is shared), the decisions themselves do not.
        const strip = (log: typeof alone.log) =>
          log.filter((d) => d.endpoint === A).map(({ at: _at, ...rest }) => rest);
        expect(strip(mixed.log)).toEqual(strip(alone.log));
        if (forA.length > 0) {
          const { degradedSince: _x, ...a } = alone.engine.state(A)!;
          const { degradedSince: _y, ...m } = mixed.engine.state(A)!;
          expect(m).toEqual(a);
        }
        const again = scripted(opts, configured);
        again.play(A, forA);
        expect(again.log).toEqual(alone.log);
        expect(again.engine.snapshot()).toEqual(alone.engine.snapshot());
      }),
    );
  });
});
