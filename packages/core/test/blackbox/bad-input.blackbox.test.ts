// Black-box acceptance tests of issue #2 "Bad input": typed errors naming the problem, nothing left
// pending, no timer or caller-signal listener leaked.
import { getEventListeners } from 'node:events';
import { describe, expect, test } from 'vitest';
import { createClient } from '../../src/index';
import { json, settle, setup } from './harness';

describe('Bad input (issue #2)', () => {
  test('createClient: an invalid baseURL is a RangeError naming baseURL', () => {
    expect(() => createClient({ baseURL: 'http://[bad' })).toThrow(/baseURL/);
    expect(() => createClient({ baseURL: 'http://[bad' })).toThrow(RangeError);
  });

  test('per request: invalid URL, bad ttl/attempts/timeout reject with a typed error naming the option; nothing is sent', async () => {
    const s = setup();
    const cases: [Promise<unknown>, RegExp][] = [
      [s.client.get('http://[bad'), /url|URL/],
      [s.client.get('/x', { cache: { ttl: -1 } }), /ttl/],
      [s.client.get('/x', { retry: { attempts: 'x' as never } }), /attempts/],
      [s.client.get('/x', { timeout: Number.NaN }), /timeout/],
    ];
    for (const [p, re] of cases) {
      const o = await settle(p);
      expect(o.ok).toBe(false);
      if (!o.ok) {
        expect(o.error instanceof TypeError || o.error instanceof RangeError).toBe(true);
        expect(String((o.error as Error).message)).toMatch(re);
      }
    }
    expect(s.backend.calls).toHaveLength(0);
  });

  test('a JSON content type with a malformed body rejects with a typed error', async () => {
    const s = setup();
    s.backend.handler = () =>
      new Response('{not json', { status: 200, headers: { 'content-type': 'application/json' } });
    const o = await settle(s.client.get('/j'));
    expect(o.ok).toBe(false);
    if (!o.ok) expect((o.error as Error).name).toBe('ParseError');
  });

  test('after mixed requests with cancellations, timeouts and retries: no timer, no caller-signal listener, no active request', async () => {
    const s = setup({
      retry: { baseDelay: 10, jitter: false },
      circuitBreaker: { failureThreshold: 1000 },
    });
    let n = 0;
    s.backend.handler = () => {
      n++;
      if (n % 4 === 0) return json({}, 503);
      if (n % 4 === 1) return new Promise<Response>(() => {});
      return json({ n });
    };
    const signals: AbortSignal[] = [];
    const all: Promise<unknown>[] = [];
    for (let i = 0; i < 200; i++) {
      const ctrl = new AbortController();
      signals.push(ctrl.signal);
      const p = s.client.get(`/m/${i % 17}`, {
        signal: ctrl.signal,
        timeout: 50,
        cache: i % 3 === 0 ? false : undefined,
      });
      all.push(settle(p));
      if (i % 5 === 0) p.cancel();
      if (i % 7 === 0) ctrl.abort();
    }
    for (let i = 0; i < 20; i++) await s.clock.advance(50);
    await Promise.all(all);
    expect(s.clock.pending).toBe(0);
    for (const sig of signals) expect(getEventListeners(sig, 'abort')).toHaveLength(0);
    expect(s.client.intelligence().snapshot().summary.activeRequests).toBe(0);
  });
});
