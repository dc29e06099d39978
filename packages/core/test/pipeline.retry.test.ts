import { describe, expect, test } from 'vitest';
import { HttpError, TimeoutError } from '../src/index';
import { FAKE_EPOCH, fetchFrom, flush, makeClient, networkError, track } from './helpers';

const status = (s: number, headers?: Record<string, string>) =>
  new Response(`status ${s}`, { status: s, headers });

/** A handler that answers calls from a script, then 200 {ok:true}. */
function script(...steps: (Response | Error)[]) {
  return (): Response | Promise<Response> => {
    const next = steps.shift();
    if (next === undefined) return Response.json({ ok: true });
    if (next instanceof Error) return Promise.reject(next);
    return next;
  };
}

describe('retry', () => {
  test('retries 503 with exponential backoff and recovers; retry events carry the HttpError', async () => {
    const t = makeClient({}, { handler: script(status(503), status(503)) });
    const p = track(t.client.get('/r'));
    await flush();
    expect(t.fake.calls).toHaveLength(1);
    await t.clock.advance(99);
    expect(t.fake.calls).toHaveLength(1);
    await t.clock.advance(1);
    expect(t.fake.calls).toHaveLength(2);
    await t.clock.advance(199);
    expect(t.fake.calls).toHaveLength(2);
    await t.clock.advance(1);
    expect(t.fake.calls).toHaveLength(3);
    expect(p.current).toMatchObject({ state: 'fulfilled', value: { data: { ok: true } } });

    const retries = t.of('retry');
    expect(retries.map((r) => [r.attempts, r.delay])).toEqual([
      [1, 100],
      [2, 200],
    ]);
    for (const r of retries) {
      expect(r.error).toBeInstanceOf(HttpError);
      expect((r.error as HttpError).status).toBe(503);
      expect(r.key).toBe(t.client.resolve('GET', '/r').key);
    }
    const tracker = t.of('request')[0]!.tracker;
    expect(tracker).toMatchObject({ state: 'success', attempts: 3 });
    expect(t.of('success')).toHaveLength(1);
    expect(t.of('error')).toHaveLength(0);
    expect(t.clock.live).toBe(0);
  });

  test('the tracker is retrying from the moment a retry is scheduled', async () => {
    const t = makeClient({}, { handler: script(status(503)) });
    const states: string[] = [];
    t.client.on('retry', (e) => states.push(e.tracker.state));
    const p = t.client.get('/state');
    await flush();
    const tracker = t.of('request')[0]!.tracker;
    expect(states).toEqual(['retrying']);
    expect(tracker.state).toBe('retrying');
    await t.clock.advance(100);
    await p;
    expect(tracker.state).toBe('success');
  });

  test.each([408, 429, 500, 502, 503, 504])('status %i is retried by default', async (s) => {
    const t = makeClient({}, { handler: script(status(s)) });
    const p = t.client.get(`/s${s}`);
    await t.clock.advance(100);
    await expect(p).resolves.toMatchObject({ status: 200 });
    expect(t.fake.calls).toHaveLength(2);
  });

  test.each([400, 401, 404, 409, 501])('status %i is not retried by default', async (s) => {
    const t = makeClient({}, { handler: script(status(s)) });
    await expect(t.client.get(`/n${s}`)).rejects.toMatchObject({ name: 'HttpError', status: s });
    expect(t.fake.calls).toHaveLength(1);
    expect(t.of('retry')).toHaveLength(0);
    expect(t.of('error')).toHaveLength(1);
  });

  test('attempts are the total including the first; the last error is the rejection', async () => {
    const t = makeClient({ retry: { attempts: 4 } }, { handler: () => status(500) });
    const p = track(t.client.get('/exhaust'));
    await t.clock.advance(100 + 200 + 400);
    expect(t.fake.calls).toHaveLength(4);
    expect(p.current.state).toBe('rejected');
    expect((p.current as { reason: HttpError }).reason.status).toBe(500);
    expect(t.of('retry')).toHaveLength(3);
    expect(t.of('error')).toHaveLength(1);
    expect(t.of('request')[0]!.tracker).toMatchObject({ state: 'error', attempts: 4 });
  });

  test('retry:false fails on the first attempt', async () => {
    const t = makeClient({}, { handler: () => status(503) });
    await expect(t.client.get('/nr', { retry: false })).rejects.toBeInstanceOf(HttpError);
    expect(t.fake.calls).toHaveLength(1);
    expect(t.of('retry')).toHaveLength(0);
  });

  test('retryOn decides (status, or undefined for network errors)', async () => {
    const seen: (number | undefined)[] = [];
    const t = makeClient(
      {
        retry: {
          attempts: 5,
          retryOn: (s) => {
            seen.push(s);
            return s === 404 || s === undefined;
          },
        },
      },
      { handler: script(status(404), networkError(), status(503)) },
    );
    const p = track(t.client.get('/on'));
    await t.clock.advance(100 + 200);
    expect(p.current.state).toBe('rejected');
    expect(seen).toEqual([404, undefined, 503]);
    expect(t.fake.calls).toHaveLength(3);
  });

  test('network errors are retried', async () => {
    const t = makeClient({}, { handler: script(networkError(), networkError()) });
    const p = t.client.get('/net');
    await t.clock.advance(300);
    await expect(p).resolves.toMatchObject({ data: { ok: true } });
    expect(t.of('retry').map((r) => (r.error as Error).message)).toEqual([
      'fetch failed',
      'fetch failed',
    ]);
  });

  test('a network error that exhausts attempts rejects with that error', async () => {
    const t = makeClient(
      { retry: { attempts: 2 } },
      { handler: () => Promise.reject(networkError()) },
    );
    const p = track(t.client.get('/net2'));
    await t.clock.advance(100);
    expect((p.current as { reason: Error }).reason.message).toBe('fetch failed');
  });

  test('fixed backoff and maxDelay', async () => {
    const t = makeClient(
      { retry: { attempts: 5, backoff: 'fixed', baseDelay: 70 } },
      { handler: () => status(503) },
    );
    t.client.get('/fixed').catch(() => {});
    await t.clock.runAll();
    expect(t.of('retry').map((r) => r.delay)).toEqual([70, 70, 70, 70]);

    const u = makeClient({ retry: { attempts: 5, maxDelay: 250 } }, { handler: () => status(503) });
    u.client.get('/max').catch(() => {});
    await u.clock.runAll();
    expect(u.of('retry').map((r) => r.delay)).toEqual([100, 200, 250, 250]);
  });

  test('jitter uses the injected random source', async () => {
    const t = makeClient(
      { random: () => 0.5, retry: { jitter: true, attempts: 3 } },
      { handler: () => status(503) },
    );
    t.client.get('/jit').catch(() => {});
    await t.clock.runAll();
    expect(t.of('retry').map((r) => r.delay)).toEqual([75, 150]);
  });

  test('Retry-After in seconds wins over backoff', async () => {
    const t = makeClient({}, { handler: script(status(503, { 'retry-after': '5' })) });
    const p = track(t.client.get('/ra'));
    await t.clock.advance(4999);
    expect(t.fake.calls).toHaveLength(1);
    await t.clock.advance(1);
    expect(t.fake.calls).toHaveLength(2);
    expect(p.current.state).toBe('fulfilled');
    expect(t.of('retry')[0]!.delay).toBe(5000);
  });

  test('Retry-After as an HTTP date wins over backoff', async () => {
    const at = new Date(FAKE_EPOCH + 3000).toUTCString();
    const t = makeClient({}, { handler: script(status(429, { 'retry-after': at })) });
    const p = track(t.client.get('/rad'));
    await t.clock.advance(2999);
    expect(t.fake.calls).toHaveLength(1);
    await t.clock.advance(1);
    expect(t.fake.calls).toHaveLength(2);
    expect(p.current.state).toBe('fulfilled');
    expect(t.of('retry')[0]!.delay).toBe(3000);
  });

  test('Retry-After wins even over maxDelay', async () => {
    const t = makeClient(
      { retry: { maxDelay: 10 } },
      { handler: script(status(503, { 'retry-after': '2' })) },
    );
    t.client.get('/ramax').catch(() => {});
    await flush();
    expect(t.of('retry')[0]!.delay).toBe(2000);
    t.client.cancelAll();
  });

  test('Retry-After is ignored when respectRetryAfter is false', async () => {
    const t = makeClient(
      { retry: { respectRetryAfter: false } },
      { handler: script(status(503, { 'retry-after': '5' })) },
    );
    const p = track(t.client.get('/noresp'));
    await t.clock.advance(100);
    expect(t.fake.calls).toHaveLength(2);
    expect(p.current.state).toBe('fulfilled');
    expect(t.of('retry')[0]!.delay).toBe(100);
  });

  test('per-request retry options layer over the client', async () => {
    const t = makeClient({ retry: { attempts: 2 } }, { handler: () => status(503) });
    t.client.get('/layer', { retry: { attempts: 4 } }).catch(() => {});
    await t.clock.runAll();
    expect(t.fake.calls).toHaveLength(4);
    expect(t.of('retry').map((r) => r.delay)).toEqual([100, 200, 400]);
  });

  test('a timed-out attempt is a TimeoutError, retried; each attempt has its own timeout', async () => {
    const t = makeClient({ timeout: 50 });
    const p = track(t.client.get('/slow'));
    await t.clock.advance(50);
    expect(t.fake.calls[0]!.signal?.aborted).toBe(true);
    expect(t.of('retry')[0]!.error).toBeInstanceOf(TimeoutError);
    await t.clock.advance(100);
    expect(t.fake.calls).toHaveLength(2);
    await t.clock.advance(49);
    t.fake.last().json('late but in time');
    await flush();
    expect(p.current).toMatchObject({ state: 'fulfilled', value: { data: 'late but in time' } });
    expect(t.clock.live).toBe(0);
  });

  test('timeouts on every attempt end in TimeoutError', async () => {
    const t = makeClient({ timeout: 50, retry: { attempts: 2 } });
    const p = track(t.client.get('/always-slow'));
    await t.clock.advance(50 + 100 + 50);
    expect(p.current.state).toBe('rejected');
    expect((p.current as { reason: unknown }).reason).toBeInstanceOf(TimeoutError);
    expect(t.fake.calls.every((c) => c.signal?.aborted)).toBe(true);
    expect(t.of('error')[0]!.error).toBeInstanceOf(TimeoutError);
  });

  test('a per-request timeout beats the client default', async () => {
    const t = makeClient({ timeout: 1000, retry: { attempts: 1 } });
    const p = track(t.client.get('/t', { timeout: 10 }));
    await t.clock.advance(10);
    expect((p.current as { reason: unknown }).reason).toBeInstanceOf(TimeoutError);
  });

  test('timeout 0 means none', async () => {
    const t = makeClient({ timeout: 0 });
    const p = track(t.client.get('/none'));
    await t.clock.advance(10 * 60_000);
    expect(p.current.state).toBe('pending');
    expect(t.clock.live).toBe(0);
    t.client.cancelAll();
  });

  test('mutations are retried too (same policy)', async () => {
    const t = makeClient({}, { handler: script(status(503)) });
    const p = t.client.post('/m', { a: 1 });
    await t.clock.advance(100);
    await expect(p).resolves.toMatchObject({ status: 200 });
    expect(t.fake.calls.map((c) => c.body)).toEqual(['{"a":1}', '{"a":1}']);
  });

  test('fetchFrom helper answers every call', async () => {
    const f = fetchFrom(() => new Response('x'));
    await expect(f.fetch('https://a.test', {})).resolves.toBeInstanceOf(Response);
  });
});
