/**
 * Spec conformance, black box: every testable statement of the client spec (shared seed 000) and
 * issues #2, #3 and #11 that no other test pinned, written as a grader who read only the spec
 * would: public exports, an injected fetch, vitest's fake timers (the default clock reads the
 * globals at call time). Utilities and errors are in spec-conformance.utils.test.ts.
 */
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import {
  CancelledError,
  type ClientOptions,
  HttpError,
  isAbortError,
  TimeoutError,
} from '../src/index';
import { createTestClient } from './helpers';
import { BASE, type Call, fakeFetch, json, type Reply, record } from './spec-fixtures';

function client(route: (call: Call, n: number) => Reply, options: ClientOptions = {}) {
  const f = fakeFetch(route);
  const c = createTestClient({ baseURL: BASE, fetch: f.fetch, ...options });
  return { client: c, calls: f.calls };
}

const tick = () => vi.advanceTimersByTimeAsync(0);

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('pipeline: cache', () => {
  test('a fresh cache-first GET is served from memory with cache-hit {key, tracker}', async () => {
    const { client: c, calls } = client(() => json({ n: 1 }));
    const log = record(c, ['cache-hit', 'cache-write', 'request', 'success']);
    const first = await c.get('/a');
    expect(first.data).toEqual({ n: 1 });
    expect(log.map(([n]) => n)).toEqual(['request', 'cache-write', 'success']);
    const writeEvent = log[1]![1];
    expect(writeEvent.key).toEqual(expect.any(String));
    expect((writeEvent.response as { data: unknown }).data).toEqual({ n: 1 });
    log.length = 0;
    const second = await c.get('/a');
    expect(second.data).toEqual({ n: 1 });
    expect(second.status).toBe(200);
    expect(second.headers).toBeInstanceOf(Headers);
    expect(calls).toHaveLength(1);
    expect(log.map(([n]) => n)).toEqual(['cache-hit']);
    expect(log[0]![1]).toMatchObject({ key: writeEvent.key });
    expect(log[0]![1].tracker).toBeDefined();
  });

  test('only GET is cached: HEAD, OPTIONS and mutations always reach the network', async () => {
    const { client: c, calls } = client(() => json({ ok: true }));
    for (const method of ['HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      await c.request(method, '/m');
      await c.request(method, '/m');
    }
    expect(calls.map((call) => call.method)).toEqual([
      'HEAD',
      'HEAD',
      'OPTIONS',
      'OPTIONS',
      'POST',
      'POST',
      'PUT',
      'PUT',
      'PATCH',
      'PATCH',
      'DELETE',
      'DELETE',
    ]);
  });

  test('the default ttl is 30000 ms: fresh before it, a miss at it (cache-first)', async () => {
    let n = 0;
    const { client: c, calls } = client(() => json({ n: ++n }));
    await c.get('/t');
    await vi.advanceTimersByTimeAsync(29_999);
    expect((await c.get('/t')).data).toEqual({ n: 1 });
    await vi.advanceTimersByTimeAsync(1);
    expect((await c.get('/t')).data).toEqual({ n: 2 });
    expect(calls).toHaveLength(2);
  });

  test('a request ttl and a client ttl are honoured', async () => {
    let n = 0;
    const { client: c } = client(() => json({ n: ++n }), { cache: { ttl: 100 } });
    await c.get('/t');
    await vi.advanceTimersByTimeAsync(100);
    expect((await c.get('/t')).data).toEqual({ n: 2 });
    await c.get('/u', { cache: { ttl: 5000 } });
    await vi.advanceTimersByTimeAsync(4000);
    expect((await c.get('/u', { cache: { ttl: 5000 } })).data).toEqual({ n: 3 });
  });

  test('cache: false on a request neither reads nor writes the cache', async () => {
    let n = 0;
    const { client: c, calls } = client(() => json({ n: ++n }));
    await c.get('/f');
    expect((await c.get('/f', { cache: false })).data).toEqual({ n: 2 });
    expect((await c.get('/f')).data).toEqual({ n: 1 }); // the cached one, not overwritten
    await c.get('/g', { cache: false });
    await c.get('/g');
    expect(calls).toHaveLength(4);
  });

  test('createClient({cache: false}) disables caching', async () => {
    const { client: c, calls } = client(() => json(1), { cache: false });
    await c.get('/x');
    await c.get('/x');
    expect(calls).toHaveLength(2);
  });

  test('stale-while-revalidate: a stale entry is served with cache-hit and refetched in the background, ending in revalidate', async () => {
    let n = 0;
    const { client: c, calls } = client(() => json({ n: ++n }), {
      cache: { ttl: 1000, strategy: 'stale-while-revalidate' },
    });
    await c.get('/s');
    await vi.advanceTimersByTimeAsync(1500);
    const log = record(c, ['cache-hit', 'request', 'cache-write', 'success', 'revalidate']);
    const updates: unknown[] = [];
    c.subscribe(
      () => true,
      (u) => updates.push(u.type),
    );
    const stale = await c.get('/s');
    expect(stale.data).toEqual({ n: 1 });
    await tick();
    expect(calls).toHaveLength(2);
    expect(log.map(([name]) => name)).toEqual([
      'cache-hit',
      'request',
      'cache-write',
      'success',
      'revalidate',
    ]);
    expect((log[4]![1].response as { data: unknown }).data).toEqual({ n: 2 });
    expect(updates).toContain('revalidate');
    expect((await c.get('/s')).data).toEqual({ n: 2 });
  });

  test('the request cache.strategy wins over the client default', async () => {
    let n = 0;
    const { client: c, calls } = client(() => json({ n: ++n }), { cache: { ttl: 10 } });
    await c.get('/p');
    await vi.advanceTimersByTimeAsync(20);
    const stale = await c.get('/p', { cache: { ttl: 10, strategy: 'stale-while-revalidate' } });
    expect(stale.data).toEqual({ n: 1 });
    await tick();
    expect(calls).toHaveLength(2);
  });

  test('clearCache drops every entry', async () => {
    const { client: c, calls } = client(() => json(1));
    await c.get('/a');
    c.clearCache();
    await c.get('/a');
    expect(calls).toHaveLength(2);
  });
});

describe('pipeline: dedup', () => {
  test('reads with the same key share one flight; dedup {key, method, url, consumers}', async () => {
    for (const method of ['GET', 'HEAD', 'OPTIONS'] as const) {
      const { client: c, calls } = client(() => json({ ok: 1 }));
      const log = record(c, ['dedup']);
      const a = c.request(method, '/d');
      const b = c.request(method, '/d');
      const d = c.request(method, '/d');
      const [ra, rb, rd] = await Promise.all([a, b, d]);
      expect(calls).toHaveLength(1);
      expect(rb.status).toBe(ra.status);
      expect(rd.data).toEqual(ra.data);
      expect(log).toHaveLength(2);
      expect(log[0]![1]).toMatchObject({ method, consumers: 2 });
      expect(log[1]![1]).toMatchObject({ method, consumers: 3 });
      expect(log[0]![1].url).toBe(`${BASE}/d`);
      expect(typeof log[0]![1].key).toBe('string');
    }
  });

  test('mutations are never coalesced', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      const { client: c, calls } = client(() => json({}));
      const dedups: unknown[] = [];
      c.on('dedup', (e) => dedups.push(e));
      await Promise.all([c.request(method, '/m'), c.request(method, '/m')]);
      expect(calls).toHaveLength(2);
      expect(dedups).toHaveLength(0);
    }
  });

  test('joiners get the same error', async () => {
    const { client: c, calls } = client(() => json({ no: 1 }, 404));
    const results = await Promise.allSettled([c.get('/e'), c.get('/e')]);
    expect(calls).toHaveLength(1);
    for (const r of results) {
      expect(r.status).toBe('rejected');
      expect((r as PromiseRejectedResult).reason).toBeInstanceOf(HttpError);
      expect((r as PromiseRejectedResult).reason.status).toBe(404);
    }
  });

  test('a joiner cancelling rejects only itself; the flight goes on for the owner', async () => {
    let answer!: (r: Response) => void;
    const { client: c, calls } = client(() => new Promise<Response>((r) => (answer = r)));
    const owner = c.get('/j');
    const joiner = c.get('/j');
    joiner.cancel();
    await expect(joiner).rejects.toBeInstanceOf(CancelledError);
    expect(calls[0]!.signal?.aborted ?? false).toBe(false);
    answer(json({ v: 1 }));
    expect((await owner).data).toEqual({ v: 1 });
  });

  test('the owner cancelling leaves the joiner its flight; a joiner keeps its own signal', async () => {
    let answer!: (r: Response) => void;
    const { client: c, calls } = client(() => new Promise<Response>((r) => (answer = r)));
    const owner = c.get('/j');
    const ctl = new AbortController();
    const joiner = c.get('/j', { signal: ctl.signal });
    const third = c.get('/j');
    owner.cancel();
    ctl.abort();
    await expect(owner).rejects.toBeInstanceOf(CancelledError);
    await expect(joiner).rejects.toSatisfy(isAbortError);
    expect(calls[0]!.signal?.aborted ?? false).toBe(false);
    answer(json({ v: 2 }));
    expect((await third).data).toEqual({ v: 2 });
    expect(calls).toHaveLength(1);
  });

  test('the network attempt is aborted when no consumer is left', async () => {
    const { client: c, calls } = client(() => 'hang');
    const a = c.get('/k');
    const b = c.get('/k');
    await tick();
    a.cancel();
    expect(calls[0]!.signal?.aborted ?? false).toBe(false);
    b.cancel();
    expect(calls[0]!.signal?.aborted).toBe(true);
    await expect(a).rejects.toBeInstanceOf(CancelledError);
    await expect(b).rejects.toBeInstanceOf(CancelledError);
  });
});

describe('pipeline: retry', () => {
  test.each([408, 429, 500, 502, 503, 504])(
    '%i is retried by default (3 attempts)',
    async (status) => {
      const { client: c, calls } = client(() => json({}, status));
      const p = c.get('/r').catch((e: unknown) => e);
      await vi.runAllTimersAsync();
      const error = await p;
      expect(error).toBeInstanceOf(HttpError);
      expect((error as HttpError).status).toBe(status);
      expect(calls).toHaveLength(3);
    },
  );

  test.each([400, 401, 403, 404, 409, 422, 501, 505])('%i is not retried', async (status) => {
    const { client: c, calls } = client(() => json({}, status));
    await expect(c.get('/r')).rejects.toMatchObject({ status });
    expect(calls).toHaveLength(1);
  });

  test('attempts counts the first attempt; a success after retries resolves', async () => {
    const { client: c, calls } = client((_, n) => (n < 3 ? json({}, 503) : json({ ok: n })), {
      retry: { attempts: 3, jitter: false },
    });
    const p = c.get('/r');
    await vi.runAllTimersAsync();
    expect((await p).data).toEqual({ ok: 3 });
    expect(calls).toHaveLength(3);
  });

  test('retry: false fails on the first attempt (request and client level)', async () => {
    const { client: c, calls } = client(() => json({}, 503));
    await expect(c.get('/r', { retry: false })).rejects.toMatchObject({ status: 503 });
    expect(calls).toHaveLength(1);
    const other = client(() => json({}, 503), { retry: false });
    await expect(other.client.get('/r')).rejects.toMatchObject({ status: 503 });
    expect(other.calls).toHaveLength(1);
  });

  test('retry events: {key, tracker, attempts, delay, error: HttpError}; exponential backoff without jitter', async () => {
    const { client: c } = client(() => json({}, 500), {
      retry: { attempts: 4, baseDelay: 100, maxDelay: 250, jitter: false },
    });
    const log = record(c, ['retry']);
    const p = c.get('/r').catch(() => undefined);
    await vi.runAllTimersAsync();
    await p;
    expect(log.map(([, e]) => [e.attempts, e.delay])).toEqual([
      [1, 100],
      [2, 200],
      [3, 250],
    ]);
    for (const [, e] of log) {
      expect(e.error).toBeInstanceOf(HttpError);
      expect((e.error as HttpError).status).toBe(500);
      expect(e.tracker).toBeDefined();
      expect(typeof e.key).toBe('string');
    }
  });

  test('fixed backoff waits baseDelay each time', async () => {
    const { client: c } = client(() => json({}, 500), {
      retry: { baseDelay: 300, backoff: 'fixed', jitter: false },
    });
    const log = record(c, ['retry']);
    const p = c.get('/r').catch(() => undefined);
    await vi.runAllTimersAsync();
    await p;
    expect(log.map(([, e]) => e.delay)).toEqual([300, 300]);
  });

  test('the wait is really waited: no second attempt before the delay', async () => {
    const { client: c, calls } = client((_, n) => (n === 1 ? json({}, 503) : json({ ok: 1 })), {
      retry: { baseDelay: 1000, jitter: false },
    });
    const p = c.get('/r');
    await vi.advanceTimersByTimeAsync(999);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
    await expect(p).resolves.toMatchObject({ data: { ok: 1 } });
  });

  test('Retry-After (seconds) always wins over backoff, also above maxDelay', async () => {
    const { client: c, calls } = client(
      (_, n) => (n === 1 ? json({}, 503, { 'retry-after': '45' }) : json({ ok: 1 })),
      { retry: { baseDelay: 10, maxDelay: 20, jitter: false } },
    );
    const log = record(c, ['retry']);
    const p = c.get('/r');
    await vi.advanceTimersByTimeAsync(44_999);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await expect(p).resolves.toMatchObject({ data: { ok: 1 } });
    expect(log[0]![1].delay).toBe(45_000);
  });

  test('Retry-After as an HTTP date wins over backoff', async () => {
    const { client: c } = client(
      (_, n) =>
        n === 1
          ? json({}, 429, { 'retry-after': new Date(Date.now() + 7000).toUTCString() })
          : json({ ok: 1 }),
      { retry: { jitter: false } },
    );
    const log = record(c, ['retry']);
    const p = c.get('/r');
    await vi.runAllTimersAsync();
    await p;
    // The date has second precision: a wait of 6 to 7 s.
    expect(log[0]![1].delay).toBeGreaterThan(6000);
    expect(log[0]![1].delay).toBeLessThanOrEqual(7000);
  });

  test('respectRetryAfter: false ignores Retry-After', async () => {
    const { client: c } = client(
      (_, n) => (n === 1 ? json({}, 503, { 'retry-after': '45' }) : json({ ok: 1 })),
      { retry: { baseDelay: 10, jitter: false, respectRetryAfter: false } },
    );
    const log = record(c, ['retry']);
    const p = c.get('/r');
    await vi.runAllTimersAsync();
    await p;
    expect(log[0]![1].delay).toBe(10);
  });

  test('retryOn decides eligibility (status, or undefined for a network error)', async () => {
    const seen: unknown[] = [];
    const { client: c, calls } = client(() => json({}, 418), {
      retry: {
        jitter: false,
        baseDelay: 1,
        retryOn: (status) => {
          seen.push(status);
          return status === 418;
        },
      },
    });
    const p = c.get('/r').catch((e: unknown) => e);
    await vi.runAllTimersAsync();
    expect(await p).toBeInstanceOf(HttpError);
    expect(calls).toHaveLength(3);
    // Asked for each failed attempt (whether the last one is asked is not specified).
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen.every((s) => s === 418)).toBe(true);
    const net = client(() => new TypeError('fetch failed'), {
      retry: {
        baseDelay: 1,
        retryOn: (status) => {
          seen.push(status);
          return false;
        },
      },
    });
    await expect(net.client.get('/n')).rejects.toBeDefined();
    expect(seen.at(-1)).toBeUndefined();
    expect(net.calls).toHaveLength(1);
  });

  test('network errors are retried (GET)', async () => {
    const { client: c, calls } = client((_, n) =>
      n < 3 ? new TypeError('fetch failed') : json({ ok: 1 }),
    );
    const p = c.get('/r');
    await vi.runAllTimersAsync();
    await expect(p).resolves.toMatchObject({ data: { ok: 1 } });
    expect(calls).toHaveLength(3);
  });

  test('issue 11: a POST answered 503 or reset is sent once; PUT and DELETE are retried', async () => {
    for (const reply of [() => json({}, 503), () => new TypeError('fetch failed')]) {
      const { client: c, calls } = client(reply);
      const p = c.post('/p', { a: 1 }).catch((e: unknown) => e);
      await vi.runAllTimersAsync();
      await p;
      expect(calls).toHaveLength(1);
      const patch = c.patch('/p', { a: 1 }).catch((e: unknown) => e);
      await vi.runAllTimersAsync();
      await patch;
      expect(calls).toHaveLength(2);
      for (const method of ['PUT', 'DELETE'] as const) {
        const before = calls.length;
        const q = c.request(method, '/p').catch((e: unknown) => e);
        await vi.runAllTimersAsync();
        await q;
        expect(calls.length - before).toBe(3);
      }
    }
  });

  test('issue 11: a POST is retried on 429 and on 503 with Retry-After, and when listed in retry.methods', async () => {
    const a = client((_, n) => (n === 1 ? json({}, 429) : json({ ok: 1 })));
    const p = a.client.post('/p', {});
    await vi.runAllTimersAsync();
    await expect(p).resolves.toMatchObject({ data: { ok: 1 } });
    expect(a.calls).toHaveLength(2);

    const b = client((_, n) => (n === 1 ? json({}, 503, { 'retry-after': '1' }) : json({ ok: 1 })));
    const q = b.client.post('/p', {});
    await vi.runAllTimersAsync();
    await expect(q).resolves.toMatchObject({ data: { ok: 1 } });
    expect(b.calls).toHaveLength(2);

    const d = client((_, n) => (n === 1 ? json({}, 503) : json({ ok: 1 })), {
      retry: { methods: ['GET', 'POST'] },
    });
    const r = d.client.post('/p', {});
    await vi.runAllTimersAsync();
    await expect(r).resolves.toMatchObject({ data: { ok: 1 } });
    expect(d.calls).toHaveLength(2);
  });
});

describe('pipeline: timeouts and cancellation', () => {
  test('a per-attempt timeout aborts the fetch with TimeoutError; each attempt gets its own', async () => {
    const { client: c, calls } = client(() => 'hang', {
      timeout: 100,
      retry: { attempts: 2, baseDelay: 10, jitter: false },
    });
    const p = c.get('/slow').catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(99);
    expect(calls[0]!.signal?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls[0]!.signal?.aborted).toBe(true);
    await vi.advanceTimersByTimeAsync(10);
    expect(calls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(100);
    const error = await p;
    expect(error).toBeInstanceOf(TimeoutError);
    expect(isAbortError(error)).toBe(false);
  });

  test('the request timeout wins over the client timeout', async () => {
    const { client: c } = client(() => 'hang', { timeout: 50, retry: false });
    const p = c.get('/slow', { timeout: 500 }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(499);
    let settled = false;
    void p.then(() => (settled = true));
    await tick();
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await p).toBeInstanceOf(TimeoutError);
  });

  test('timeout 0 (default) means none', async () => {
    const { client: c } = client(() => 'hang', { retry: false });
    const p = c.get('/slow');
    let settled = false;
    p.then(
      () => (settled = true),
      () => (settled = true),
    );
    await vi.advanceTimersByTimeAsync(600_000);
    expect(settled).toBe(false);
    p.cancel();
    await expect(p).rejects.toBeInstanceOf(CancelledError);
  });

  test('an already-aborted signal rejects immediately: no fetch, no request event', async () => {
    const { client: c, calls } = client(() => json({}));
    const log = record(c, ['request', 'error', 'cancel']);
    const ctl = new AbortController();
    ctl.abort();
    for (const method of ['GET', 'POST'] as const) {
      const p = c.request(method, '/x', { signal: ctl.signal });
      let outcome: unknown;
      p.catch((e: unknown) => (outcome = e));
      // "immediately": settled before any timer runs.
      await Promise.resolve();
      await Promise.resolve();
      expect(outcome).toBeDefined();
      expect(isAbortError(outcome)).toBe(true);
      expect(outcome).toBeInstanceOf(CancelledError);
    }
    expect(calls).toHaveLength(0);
    expect(log).toEqual([]);
  });

  test('an already-aborted signal rejects even when the answer is cached', async () => {
    const { client: c } = client(() => json({ v: 1 }));
    await c.get('/x');
    const ctl = new AbortController();
    ctl.abort();
    await expect(c.get('/x', { signal: ctl.signal })).rejects.toBeInstanceOf(CancelledError);
  });

  test('cancel() rejects with CancelledError, aborts the fetch and emits cancel {key, tracker}', async () => {
    const { client: c, calls } = client(() => 'hang');
    const log = record(c, ['cancel', 'error', 'success']);
    const p = c.get('/c');
    await tick();
    p.cancel();
    await expect(p).rejects.toBeInstanceOf(CancelledError);
    expect(calls[0]!.signal?.aborted).toBe(true);
    expect(log.map(([n]) => n)).toEqual(['cancel']);
    expect(log[0]![1]).toMatchObject({ key: expect.any(String) });
    expect(log[0]![1].tracker).toBeDefined();
  });

  test('an external signal aborts the current attempt promptly', async () => {
    const { client: c, calls } = client(() => 'hang');
    const ctl = new AbortController();
    const p = c.post('/c', { a: 1 }, { signal: ctl.signal });
    await tick();
    ctl.abort();
    await expect(p).rejects.toSatisfy(isAbortError);
    expect(calls[0]!.signal?.aborted).toBe(true);
  });

  test('cancelAll() cancels every request, a retry wait included', async () => {
    const { client: c, calls } = client((call) =>
      call.url.endsWith('/r') ? json({}, 503) : 'hang',
    );
    const a = c.get('/a');
    const b = c.post('/b', {});
    const r = c.get('/r');
    await tick();
    expect(calls).toHaveLength(3);
    c.cancelAll();
    await expect(a).rejects.toBeInstanceOf(CancelledError);
    await expect(b).rejects.toBeInstanceOf(CancelledError);
    await expect(r).rejects.toBeInstanceOf(CancelledError);
    expect(calls.slice(0, 2).every((call) => call.signal?.aborted)).toBe(true);
    await vi.runAllTimersAsync();
    expect(calls).toHaveLength(3);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('tracker', () => {
  test('a flight goes idle -> pending -> retrying -> success; its tracker is on request/retry/success', async () => {
    const { client: c } = client((_, n) => (n === 1 ? json({}, 503) : json({ ok: 1 })), {
      retry: { baseDelay: 1, jitter: false },
    });
    const states: string[] = [];
    c.on('request', (e) => states.push(`request:${e.tracker.state}`));
    c.on('retry', (e) => states.push(`retry:${e.tracker.state}`));
    c.on('success', (e) => states.push(`success:${e.tracker.state}`));
    const p = c.get('/t');
    await vi.runAllTimersAsync();
    await p;
    expect(states).toEqual(['request:pending', 'retry:retrying', 'success:success']);
  });

  test('error and cancelled end states', async () => {
    const { client: c } = client((call) => (call.url.endsWith('/e') ? json({}, 404) : 'hang'));
    const states: string[] = [];
    c.on('error', (e) => states.push(e.tracker.state));
    c.on('cancel', (e) => states.push(e.tracker.state));
    await c.get('/e').catch(() => undefined);
    const p = c.get('/h');
    p.cancel();
    await p.catch(() => undefined);
    expect(states).toEqual(['error', 'cancelled']);
  });
});

describe('hostile values', () => {
  test('a retryOn that throws a revoked Proxy: the request rejects with it and observers still count the failure', async () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const reported: unknown[] = [];
    const { client: c } = client(() => json({}, 503), {
      onError: (error) => reported.push(error),
      retry: {
        retryOn: () => {
          throw proxy;
        },
      },
    });
    let rejection: unknown;
    // Not awaited as a value: awaiting a revoked Proxy reads its `then` and throws.
    await c.get('/x').then(
      () => undefined,
      (e: unknown) => {
        rejection = e;
      },
    );
    expect(rejection === proxy).toBe(true);
    expect(reported).toEqual([]);
    expect(c.intelligence().snapshot().summary.failures).toBe(1);
  });
});
