/**
 * intelligence.adaptiveTimeout must not feed on itself. Samples used to be whole flights (queueing,
 * retry waits and timed-out attempts included) and the recommendation overrode the configured
 * timeout: with `timeout: 200` and some hanging attempts it grew 200 -> 693 -> 2,163 -> ... ->
 * 60,000 ms. A sample is now one attempt that got a response (from its slot to the parsed body),
 * and a recommendation never exceeds a configured timeout.
 */
import { describe, expect, test } from 'vitest';
import { TimeoutError } from '../src/index';
import { type FakeClock, makeClient, settle } from './helpers';

/**
 * A fetch handler answering after `ms` on the clock, except every `hangEvery`-th call after the
 * first `warm` ones (so a recommendation exists before anything hangs).
 */
function server(clockRef: { clock?: FakeClock }, ms: number, hangEvery: number, warm = 0) {
  return (call: { index: number }) => {
    if (call.index >= warm && (call.index + 1) % hangEvery === 0) return undefined; // never answers
    return new Promise<Response>((resolve) => {
      clockRef.clock!.setTimeout(() => resolve(Response.json({ ok: true })), ms);
    });
  };
}

describe('adaptive timeout', () => {
  test('with timeout: 200 and hanging attempts, the per-attempt timeout never exceeds 200', async () => {
    const ref: { clock?: FakeClock } = {};
    const t = makeClient(
      { timeout: 200, cache: false, intelligence: { adaptiveTimeout: true } },
      { handler: server(ref, 120, 4) },
    );
    ref.clock = t.clock;
    const used: number[] = [];
    for (let i = 0; i < 200; i++) {
      used.push(t.client.resolve('GET', `/items?i=${i}`).timeout);
      const p = settle(t.client.get(`/items?i=${i}`));
      await t.clock.runAll();
      await p;
    }
    const timedOut = t
      .of('retry')
      .map((r) => r.error)
      .filter((e) => e instanceof TimeoutError);
    expect(timedOut.length).toBeGreaterThan(0);
    expect(Math.max(...used)).toBeLessThanOrEqual(200);
    expect(Math.max(...timedOut.map((e) => (e as TimeoutError).timeout!))).toBeLessThanOrEqual(200);
  });

  test('without a configured timeout, timed-out attempts, waits and queueing are not samples', async () => {
    const ref: { clock?: FakeClock } = {};
    const t = makeClient(
      {
        cache: false,
        scheduler: { concurrency: 1 },
        intelligence: { adaptiveTimeout: true },
      },
      { handler: server(ref, 50, 3, 10) },
    );
    ref.clock = t.clock;
    for (let round = 0; round < 20; round++) {
      // 5 at once: four wait in the queue behind the first (up to 200 ms of queueing each)
      const ps = Array.from({ length: 5 }, (_, i) => settle(t.client.get(`/q?r=${round}&i=${i}`)));
      await t.clock.runAll();
      await Promise.all(ps);
    }
    const stats = t.client.intelligence().endpoint('GET', '/q')!;
    // every sample is one answered attempt: 50 ms
    expect(stats.latency).toMatchObject({ p50: 50, p95: 50 });
    expect(t.client.resolve('GET', '/q').timeout).toBe(150);
    expect(stats.timeouts).toBeGreaterThan(0); // the hanging attempts did time out at 150
  });

  test('an endpoint that slows past 3 x p95 for good is answered again: the timeout is not latched', async () => {
    // 50 ms answers made the timeout 150 ms; the server then answered every request in 400 ms.
    // Every attempt timed out, a timed-out attempt is no sample, so p95 stayed 50 and the
    // timeout 150 for as long as requests kept coming: not one was answered again.
    const ref: { clock?: FakeClock; ms: number } = { ms: 50 };
    const t = makeClient(
      { cache: false, intelligence: { adaptiveTimeout: true } },
      {
        handler: () =>
          new Promise<Response>((resolve) => {
            ref.clock!.setTimeout(() => resolve(Response.json({ ok: true })), ref.ms);
          }),
      },
    );
    ref.clock = t.clock;
    const get = async (i: number) => {
      const p = settle(t.client.get(`/e?i=${i}`));
      await t.clock.runAll();
      const outcome = await p;
      await t.clock.advance(1000); // steady traffic: no quiet spell ages the samples
      return outcome.state;
    };
    for (let i = 0; i < 20; i++) await get(i);
    expect(t.client.resolve('GET', '/e').timeout).toBe(150);
    ref.ms = 400;
    const states: string[] = [];
    for (let i = 20; i < 200; i++) states.push(await get(i));
    // A window of 32 attempts without one answer drops the samples: the client's own timeout
    // (none) applies until the new latency is learnt, 3 x 400 ms. (The circuit, opened by the
    // timeouts meanwhile, lets one probe of 3 attempts through every 10 s.)
    expect(states.slice(-10)).toEqual(Array(10).fill('fulfilled'));
    expect(t.client.resolve('GET', '/e').timeout).toBe(1200);
  });

  test('after a quiet hour the recommendation does not rest on the samples from before it', async () => {
    const ref: { clock?: FakeClock } = {};
    const t = makeClient(
      { cache: false, intelligence: { adaptiveTimeout: true } },
      { handler: server(ref, 400, Number.POSITIVE_INFINITY) },
    );
    ref.clock = t.clock;
    const get = async (i: number) => {
      const p = settle(t.client.get(`/slow?i=${i}`));
      await t.clock.runAll();
      await p;
    };
    for (let i = 0; i < 40; i++) await get(i);
    expect(t.client.resolve('GET', '/slow').timeout).toBe(1200);
    await t.clock.advance(3_600_000);
    // The client's own timeout (none here: 0), not 3 x an hour-old p95.
    expect(t.client.resolve('GET', '/slow').timeout).toBe(t.client.resolve('GET', '/x').timeout);
    await get(40);
    expect(t.client.intelligence().endpoint('GET', '/slow')!.latency.samples).toBe(1);
  });
});
