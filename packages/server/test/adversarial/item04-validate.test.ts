// Item 4: ctx.validate must take time linear in its input: a long digit string used to block the
// event loop for seconds (a quadratic number pattern).
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/index';
import { type Rule, validate } from '../../src/validate';
import { guardProcess, longestStall } from './harness';

guardProcess();

describe('item 4: validation is linear-time and capped', () => {
  it('a 100,000-digit string does not block the loop and gets a 400', async () => {
    const app = createApp();
    app.post('/age', (ctx) => ctx.json(ctx.validate({ age: { type: 'number' } })));
    app.get('/ping', (ctx) => ctx.send('pong'));
    const attack = `${'1'.repeat(100_000)}x`;
    let status = 0;
    const stall = await longestStall(async () => {
      const res = await app.inject({ method: 'POST', url: '/age', body: { age: attack } });
      status = res.status;
    });
    expect(status).toBe(400);
    // Generous: the quadratic pattern blocked the loop ~15 s on this input (minutes on 1 MiB).
    expect(stall).toBeLessThan(1000);
    expect((await app.inject({ url: '/ping' })).body).toBe('pong');
  });

  // For each rule, inputs of n and 8n characters shaped to make a backtracking check work hard.
  const cases: [string, Rule, (n: number) => string][] = [
    ['number: digits then junk', { type: 'number' }, (n) => `${'1'.repeat(n)}x`],
    ['number: digits, dot, digits, junk', { type: 'number' }, (n) => `1.${'1'.repeat(n)}e`],
    ['integer: sign and digits', { type: 'integer' }, (n) => `-${'9'.repeat(n)}.`],
    ['email: dotted labels', { type: 'email' }, (n) => `a@${'a.'.repeat(n / 2)}`],
    ['email: long local part', { type: 'email' }, (n) => `${'a'.repeat(n)}@`],
    [
      'string with max and pattern',
      { type: 'string', max: 64, pattern: /^(a+)+$/ },
      (n) => `${'a'.repeat(n)}!`,
    ],
    ['boolean', { type: 'boolean' }, (n) => 't'.repeat(n)],
    ['enum', { enum: ['a', 'b'] }, (n) => 'a'.repeat(n)],
    ['any with min', { min: 3 }, (n) => 'z'.repeat(n)],
  ];

  /** The fastest of several timed batches: robust against a busy machine. */
  function fastest(rule: Rule, value: string, repeat: number): number {
    const rules = { f: rule };
    let best = Number.POSITIVE_INFINITY;
    for (let round = 0; round < 7; round++) {
      const start = performance.now();
      for (let i = 0; i < repeat; i++) {
        try {
          validate(rules, { f: value });
        } catch {
          // a failing validation is the expected outcome for most shapes
        }
      }
      best = Math.min(best, performance.now() - start);
    }
    return best;
  }

  it.each(cases)('%s: 8x the input takes well under 64x the time', (_name, rule, make) => {
    const n = 2048;
    const small = fastest(rule, make(n), 40);
    const large = fastest(rule, make(8 * n), 5) * 8; // per 40 runs, like `small`
    // Linear gives ~8x (less when a length cap applies); quadratic gives ~64x. The bound sits
    // between, with room for noise: 0.05 ms absorbs timer resolution on tiny times.
    expect(large).toBeLessThan(32 * small + 0.05 * 40);
  });
});
