import { describe, expect, test } from 'vitest';
import { HttpError, isNetworkError, KeelError, NetworkError, TimeoutError } from '../src/index';
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

  test('a retry event carries what the attempt failed with: HttpError, NetworkError or TimeoutError (the spec says HttpError)', async () => {
    const headersTimeout = Object.assign(new TypeError('fetch failed'), {
      cause: { code: 'UND_ERR_HEADERS_TIMEOUT' },
    });
    const t = makeClient(
      { retry: { attempts: 4 } },
      { handler: script(status(503), networkError(), headersTimeout) },
    );
    const p = track(t.client.get('/mixed'));
    await t.clock.advance(100 + 200 + 400);
    expect(p.current.state).toBe('fulfilled');
    const errors = t.of('retry').map((r) => r.error);
    expect(errors.map((e) => e.name)).toEqual(['HttpError', 'NetworkError', 'TimeoutError']);
    expect(errors[0]).toBeInstanceOf(HttpError);
    expect(errors[1]).toBeInstanceOf(NetworkError);
    expect(errors[2]).toMatchObject({ kind: 'transport', code: 'UND_ERR_HEADERS_TIMEOUT' });
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

  // makeClient once dropped a non-object `retry`, so `{ retry: false }` still retried.
  test('client retry:false: every request is one attempt unless the request opts back in', async () => {
    const t = makeClient({ retry: false }, { handler: () => status(503) });
    const off = track(t.client.get('/off'));
    await t.clock.advance(0);
    expect(t.of('retry')).toHaveLength(0);
    expect(t.fake.calls).toHaveLength(1);
    expect((off.current as { reason?: unknown }).reason).toBeInstanceOf(HttpError);
    const p = track(t.client.get('/on', { retry: { attempts: 2, jitter: false, baseDelay: 100 } }));
    await t.clock.advance(100);
    expect(p.current.state).toBe('rejected');
    expect(t.fake.calls).toHaveLength(3);
    expect(t.of('retry')).toHaveLength(1);
  });

  // `retry: true` kept the client's `false` (one attempt), where `cache: true` turns caching
  // back on: the request said retry and got none.
  test('client retry:false: a request retry:true retries with the default policy', async () => {
    const t = makeClient({ retry: false }, { handler: () => status(503) });
    const p = track(t.client.get('/on', { retry: true }));
    await t.clock.advance(10_000);
    expect(p.current.state).toBe('rejected');
    expect(t.fake.calls).toHaveLength(3);
    expect(t.of('retry')).toHaveLength(2);
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

  test('network errors are retried; retry events carry a NetworkError naming the request', async () => {
    const t = makeClient({}, { handler: script(networkError(), networkError()) });
    const p = t.client.get('/net');
    await t.clock.advance(300);
    await expect(p).resolves.toMatchObject({ data: { ok: true } });
    const errors = t.of('retry').map((r) => r.error);
    expect(errors).toHaveLength(2);
    for (const e of errors) {
      expect(e).toBeInstanceOf(NetworkError);
      expect(e).toBeInstanceOf(KeelError);
      expect(e).toMatchObject({ method: 'GET', url: 'https://api.test/net', code: 'ERR_NETWORK' });
      expect((e as NetworkError).cause).toBeInstanceOf(TypeError);
    }
  });

  test('a network error that exhausts attempts rejects with a NetworkError, its cause kept', async () => {
    const cause = new TypeError('fetch failed', {
      cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
    });
    const t = makeClient({ retry: { attempts: 2 } }, { handler: () => Promise.reject(cause) });
    const p = track(t.client.get('/net2'));
    await t.clock.advance(100);
    const reason = (p.current as { reason: NetworkError }).reason;
    expect(isNetworkError(reason)).toBe(true);
    expect(reason.code).toBe('ECONNRESET');
    expect(reason.cause).toBe(cause);
    expect(reason.message).toBe(
      'Network error ECONNRESET (GET https://api.test/net2): read ECONNRESET',
    );
  });

  test.each([
    ['UND_ERR_HEADERS_TIMEOUT', 'HeadersTimeoutError'],
    ['UND_ERR_BODY_TIMEOUT', 'BodyTimeoutError'],
  ])(
    "undici's own %s is a TimeoutError (kind transport), counted as a timeout",
    async (code, name) => {
      const cause = new TypeError('fetch failed', {
        cause: Object.assign(new Error('Headers Timeout Error'), { code, name }),
      });
      const t = makeClient({ retry: { attempts: 2 } }, { handler: () => Promise.reject(cause) });
      const p = track(t.client.get('/undici'));
      await t.clock.advance(100);
      const reason = (p.current as { reason: TimeoutError }).reason;
      expect(reason).toBeInstanceOf(TimeoutError);
      expect(reason).toMatchObject({ kind: 'transport', code, method: 'GET' });
      expect(t.of('retry')[0]!.error).toBeInstanceOf(TimeoutError);
      expect(t.client.intelligence().endpoint('GET', '/undici')?.timeouts).toBe(2);
    },
  );

  test('retryOn tells a timeout from a network error', async () => {
    const kinds: string[] = [];
    const t = makeClient(
      {
        timeout: 50,
        retry: {
          attempts: 5,
          retryOn: (_status, error) => {
            kinds.push(
              isNetworkError(error)
                ? 'network'
                : error instanceof TimeoutError
                  ? 'timeout'
                  : 'other',
            );
            return !(error instanceof TimeoutError);
          },
        },
      },
      // the first call fails at once, the second never answers
      { handler: (call) => (call.index === 0 ? Promise.reject(networkError()) : undefined) },
    );
    const p = track(t.client.get('/kinds'));
    await t.clock.advance(100 + 50);
    expect(kinds).toEqual(['network', 'timeout']);
    expect((p.current as { reason: unknown }).reason).toBeInstanceOf(TimeoutError);
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

  test('an injected random returning NaN: the retries still wait (as for 0)', async () => {
    const t = makeClient(
      { random: () => Number.NaN, retry: { jitter: true, attempts: 3 } },
      { handler: () => status(503) },
    );
    t.client.get('/nan').catch(() => {});
    await t.clock.advance(49);
    expect(t.fake.calls).toHaveLength(1);
    await t.clock.runAll();
    expect(t.of('retry').map((r) => r.delay)).toEqual([50, 100]);
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

  test.each(['POST', 'PATCH'] as const)(
    'a %s answered 503 (or reset) is sent once: it may have been processed',
    async (method) => {
      const t = makeClient({}, { handler: script(status(503), status(503)) });
      await expect(t.client.request(method, '/m', { body: { a: 1 } })).rejects.toMatchObject({
        name: 'HttpError',
        status: 503,
      });
      expect(t.fake.calls).toHaveLength(1);
      expect(t.of('retry')).toHaveLength(0);

      const reset = new TypeError('fetch failed', {
        cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      });
      const u = makeClient({}, { handler: script(reset) });
      await expect(u.client.request(method, '/m', { body: { a: 1 } })).rejects.toBeDefined();
      expect(u.fake.calls).toHaveLength(1);
    },
  );

  test.each([
    ['429', () => status(429)],
    ['503 with Retry-After', () => status(503, { 'retry-after': '1' })],
    [
      'a refused connection',
      () =>
        new TypeError('fetch failed', {
          cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), {
            code: 'ECONNREFUSED',
          }),
        }),
    ],
  ] as const)('a POST is retried after %s: the server did not process it', async (_, failure) => {
    const t = makeClient({}, { handler: script(failure()) });
    const p = t.client.post('/m', { a: 1 });
    await t.clock.runAll();
    await expect(p).resolves.toMatchObject({ status: 200 });
    expect(t.fake.calls.map((c) => c.body)).toEqual(['{"a":1}', '{"a":1}']);
  });

  test.each(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'] as const)(
    '%s (idempotent) is retried on 503 by default',
    async (method) => {
      const t = makeClient({}, { handler: script(status(503)) });
      const p = t.client.request(method, '/i');
      await t.clock.runAll();
      await expect(p).resolves.toMatchObject({ status: 200 });
      expect(t.fake.calls).toHaveLength(2);
    },
  );

  test('retry.methods opts POST in (and can take PUT out), per client or per request', async () => {
    const t = makeClient({ retry: { methods: ['GET', 'POST'] } }, { handler: () => status(503) });
    const post = track(t.client.post('/m', 1));
    const put = track(t.client.put('/m', 1));
    await t.clock.runAll();
    expect(post.current.state).toBe('rejected');
    expect(t.fake.calls.filter((c) => c.method === 'POST')).toHaveLength(3);
    expect(put.current.state).toBe('rejected');
    expect(t.fake.calls.filter((c) => c.method === 'PUT')).toHaveLength(1);

    const u = makeClient({}, { handler: () => status(503) });
    u.client.patch('/m', 1, { retry: { methods: ['patch' as never] } }).catch(() => {});
    await u.clock.runAll();
    expect(u.fake.calls).toHaveLength(3);
  });

  test('a redirect loop is not retried', async () => {
    const loop = () =>
      Promise.reject(
        new TypeError('fetch failed', { cause: new Error('redirect count exceeded') }),
      );
    const t = makeClient({}, { handler: loop });
    await expect(t.client.get('/loop')).rejects.toBeDefined();
    expect(t.fake.calls).toHaveLength(1);
  });

  test('fetchFrom helper answers every call', async () => {
    const f = fetchFrom(() => new Response('x'));
    await expect(f.fetch('https://a.test', {})).resolves.toBeInstanceOf(Response);
  });
});

describe('retry.maxRetryAfter', () => {
  test.each([
    ['a billion seconds', '1000000000'],
    ['a date in 2099', new Date(Date.UTC(2099, 0, 1)).toUTCString()],
  ])('Retry-After of %s fails at once with the HttpError carrying the wait', async (_, header) => {
    const t = makeClient({}, { handler: () => status(503, { 'retry-after': header }) });
    const p = track(t.client.get('/far'));
    await flush();
    expect(p.current.state).toBe('rejected');
    const err = (p.current as { reason: HttpError }).reason;
    expect(err).toBeInstanceOf(HttpError);
    expect(err.status).toBe(503);
    expect(err.retryAfter).toBeGreaterThan(2 ** 31);
    expect(t.fake.calls).toHaveLength(1);
    expect(t.clock.live).toBe(0);
  });

  test('Retry-After of hundreds of digits: a finite retryAfter (2^31 s), the request fails at once', async () => {
    const header = '9'.repeat(400);
    const t = makeClient({}, { handler: () => status(503, { 'retry-after': header }) });
    const p = track(t.client.get('/huge'));
    await flush();
    const err = (p.current as { reason: HttpError }).reason;
    expect(err).toBeInstanceOf(HttpError);
    expect(err.retryAfter).toBe(2 ** 31 * 1000);
    expect(t.fake.calls).toHaveLength(1);
    expect(t.clock.live).toBe(0);
  });

  test('a wait up to maxRetryAfter is honoured; one ms more is not', async () => {
    const t = makeClient(
      { retry: { maxRetryAfter: 5000 } },
      { handler: script(status(429, { 'retry-after': '5' }), status(429, { 'retry-after': '6' })) },
    );
    const p = track(t.client.get('/cap'));
    await t.clock.advance(5000);
    expect(t.fake.calls).toHaveLength(2);
    expect(p.current.state).toBe('rejected');
    expect((p.current as { reason: HttpError }).reason.retryAfter).toBe(6000);
  });
});
