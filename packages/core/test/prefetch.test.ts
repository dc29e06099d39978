/**
 * `client.prefetch(spec, options)`: its refusal by an open circuit is returned (one consult of
 * the breaker), reported as a request's only with `reportRejection`; `ifStale` leaves a fresh
 * key alone.
 */
import { describe, expect, it } from 'vitest';
import { isCircuitOpenError } from '../src/index';
import { fail, harness } from './circuit.fixture';
import { debugOf, flush, jsonResponse, makeClient } from './helpers';

describe('prefetch', () => {
  it('returns the CircuitOpenError of an open circuit, silently by default, once with reportRejection', async () => {
    const h = harness();
    await fail(h, '/a', 3);
    const rejected = () => h.count('circuit-rejected');
    const calls = h.fake.calls.length;
    const spec = h.client.resolve('GET', '/a');
    const quiet = h.client.prefetch(spec);
    expect(isCircuitOpenError(quiet)).toBe(true);
    expect(rejected()).toBe(0);
    const reported = h.client.prefetch(spec, { reportRejection: true });
    expect(isCircuitOpenError(reported)).toBe(true);
    expect(rejected()).toBe(1);
    expect(h.client.intelligence().endpoint('GET', '/a')!.circuitRejected).toBe(1);
    await flush();
    expect(h.fake.calls.length).toBe(calls);
    // Admitted (the reset window passed: it is the probe), it returns nothing and reads.
    await h.clock.advance(1000);
    expect(h.client.prefetch(spec, { reportRejection: true })).toBeUndefined();
    await flush();
    expect(h.fake.calls.length).toBe(calls + 1);
  });

  it('ifStale: a fresh cached key is left alone; a stale or missing one is read', async () => {
    const h = harness({ cache: { enabled: true, ttl: 100 } });
    const spec = h.client.resolve('GET', '/a');
    expect(h.client.prefetch(spec, { ifStale: true })).toBeUndefined();
    await flush();
    expect(h.callsTo('/a')).toHaveLength(1);
    await h.clock.advance(99);
    h.client.prefetch(spec, { ifStale: true });
    await flush();
    expect(h.callsTo('/a')).toHaveLength(1);
    // Without ifStale it reads even over fresh data.
    h.client.prefetch(spec);
    await flush();
    expect(h.callsTo('/a')).toHaveLength(2);
    await h.clock.advance(100);
    h.client.prefetch(spec, { ifStale: true });
    await flush();
    expect(h.callsTo('/a')).toHaveLength(3);
  });

  it('bad options are a TypeError naming them, and nothing is sent', async () => {
    const h = harness();
    const spec = h.client.resolve('GET', '/a');
    expect(() => h.client.prefetch(spec, null as never)).toThrow(TypeError);
    expect(() => h.client.prefetch(spec, { ifStale: 'yes' as never })).toThrow(
      'keel: `ifStale` must be true or false, got "yes"',
    );
    expect(() => h.client.prefetch(spec, { reportRejection: 1 as never })).toThrow(
      'keel: `reportRejection` must be true or false, got 1',
    );
    await flush();
    expect(h.fake.calls).toHaveLength(0);
  });

  it('an uncached spec and a cached one both join the uncached read in flight; the cached one has its response written', async () => {
    const h = harness();
    h.answer('/u', 'hang');
    const uncached = h.client.resolve('GET', '/u', { cache: false });
    const read = h.client.request('GET', '/u', { cache: false });
    await flush();
    expect(h.callsTo('/u')).toHaveLength(1);
    h.client.prefetch(uncached);
    await flush();
    expect(h.callsTo('/u')).toHaveLength(1);
    const cached = h.client.resolve('GET', '/u', { cache: { enabled: true } });
    h.client.prefetch(cached);
    await flush();
    expect(h.callsTo('/u')).toHaveLength(1);
    h.callsTo('/u')[0]!.json({ n: 1 });
    await read;
    expect(h.client.getCached(cached.key)?.data).toEqual({ n: 1 });
  });
});

describe('prefetch given no spec', () => {
  // A key string (what getCached and setCached take) started a flight to the URL "undefined":
  // its end threw inside the client (an unhandled rejection), and `prefetch(undefined)` threw a
  // bare "Cannot read properties of undefined".
  it.each([
    ['a key string', 'GET /x'],
    ['undefined', undefined],
    ['null', null],
    // An object that is no spec started a flight from undefined fields: listeners threw, and
    // matches() threw a bare "Cannot read properties of undefined".
    ['an empty object', {}],
    ['an object with a non-string url', { url: 5 }],
    ['a cache entry (not its spec)', { key: 'GET /x', tags: [] }],
    ['a fingerprint input', { method: 'GET', url: '/x' }],
  ])('%s is a TypeError naming `spec`, and nothing is fetched', async (_what, spec) => {
    const t = makeClient({}, { handler: () => jsonResponse({ ok: true }) });
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      expect(() => t.client.prefetch(spec as never)).toThrow(
        /^keel: `spec` must be a spec from `resolve`, got /,
      );
      expect(() => t.client.matches('/x', spec as never)).toThrow(
        /^keel: `spec` must be a spec from `resolve`, got /,
      );
      expect(() => t.client.prefetch(spec as never)).toThrow(TypeError);
      expect(() => t.client.matches('/x', spec as never)).toThrow(TypeError);
      await flush();
      await flush();
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
    expect(t.fake.calls).toHaveLength(0);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
  });
});
