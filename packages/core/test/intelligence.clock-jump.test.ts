import { describe, expect, test } from 'vitest';
import { type FakeClock, jsonResponse, makeClient, settle } from './helpers';

/**
 * An attempt timed across a jump of the injected clock (a fake clock started at 0 then set to a
 * real epoch, a wall clock corrected or resumed from sleep) is no latency: a sample of ~1e12 ms
 * would pin the endpoint's p95 and average for its next 128 samples. No attempt can last longer
 * than the longest timer (2^31-1 ms, the cap on every timeout and deadline): a longer measure is
 * dropped by the latency ring, as a negative one (the clock went back) already was.
 */
describe('latency samples across a clock jump', () => {
  test.each([
    ['a jump to a real epoch', 1e12, 0],
    ['2^31 ms', 2 ** 31, 0],
    ['2^31-1 ms (the longest timer: a sample)', 2 ** 31 - 1 - 40, 1],
  ])('%s during the attempt', async (_, jump, samples) => {
    const t = makeClient({ retry: { attempts: 1 } });
    const real = t.clock.now;
    let shift = 0;
    (t.clock as FakeClock).now = () => real() + shift;
    const a = settle(t.client.get('/a'));
    await t.clock.advance(40);
    t.fake.last().json({ ok: true });
    expect((await a).state).toBe('fulfilled');
    const b = settle(t.client.get('/b'));
    await t.clock.advance(40);
    shift = jump;
    t.fake.last().respond(jsonResponse({}, { status: 404 }));
    expect((await b).state).toBe('rejected');
    const intel = t.client.intelligence();
    expect(intel.endpoint('GET', '/a')?.latency).toMatchObject({ samples: 1, p95: 40 });
    expect(intel.endpoint('GET', '/b')?.latency.samples).toBe(samples);
    expect(intel.endpoint('GET', '/b')?.failures).toBe(1);
  });
});
