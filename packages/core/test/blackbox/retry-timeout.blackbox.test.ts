// Black-box acceptance tests: retry policy (RetryOptions defaults, Errors 3-4, step 6), timeouts
// (ClientOptions.timeout, TimeoutError) and the tracker's retrying state.
import { describe, expect, test } from 'vitest';
import { CancelledError, HttpError, TimeoutError } from '../../src/index';
import { json, names, record, settle, setup } from './harness';

describe('Retry (spec: RetryOptions, Errors 3-4)', () => {
  test('default: 3 attempts in total including the first, exponential from baseDelay 1000', async () => {
    const { client, backend, clock } = setup({ random: () => 1 - Number.EPSILON });
    backend.handler = () => json({}, 503);
    const log = record(client, ['retry', 'error']);
    const out = settle(client.get('/r'));
    await clock.advance(0);
    expect(backend.calls).toHaveLength(1);
    // README formula: exponential d = min(maxDelay, baseDelay * 2^(n-1)); jitter in [d/2, d]
    await clock.advance(1000);
    expect(backend.calls).toHaveLength(2);
    await clock.advance(2000);
    expect(backend.calls).toHaveLength(3);
    await clock.advance(60_000);
    expect(backend.calls).toHaveLength(3);
    const o = await out;
    expect(o.ok).toBe(false);
    if (!o.ok) expect((o.error as HttpError).status).toBe(503);
    expect(names(log)).toEqual(['retry', 'retry', 'error']);
  });

  test('retry event {key, tracker, attempts, delay, error: HttpError}', async () => {
    const { client, backend, clock } = setup({ retry: { jitter: false } });
    let n = 0;
    backend.handler = () => (++n === 1 ? json({}, 500) : json({ ok: 1 }));
    const log = record(client, ['request', 'retry']);
    const p = client.get('/r');
    await clock.advance(1000);
    await p;
    const r = log[1]!.payload;
    expect(r.key).toBe(log[0]!.payload.key);
    expect(r.tracker).toBe(log[0]!.payload.tracker);
    expect(r.attempts).toBe(1);
    expect(r.delay).toBe(1000);
    expect(r.error).toBeInstanceOf(HttpError);
    expect((r.error as HttpError).status).toBe(500);
  });

  test('default retry-eligible statuses are 408, 429, 500, 502, 503, 504 only', async () => {
    for (const status of [408, 429, 500, 502, 503, 504, 400, 401, 403, 404, 409, 501, 505]) {
      const { client, backend, clock } = setup({
        retry: { attempts: 2, jitter: false, baseDelay: 10 },
      });
      backend.handler = () => json({}, status);
      const p = settle(client.get('/s'));
      await clock.advance(100);
      await p;
      const expected = [408, 429, 500, 502, 503, 504].includes(status) ? 2 : 1;
      expect(backend.calls.length, String(status)).toBe(expected);
    }
  });

  test('retry:false fails on the first attempt', async () => {
    const { client, backend, clock } = setup();
    backend.handler = () => json({}, 503);
    const p = settle(client.get('/s', { retry: false }));
    await clock.advance(100_000);
    expect((await p).ok).toBe(false);
    expect(backend.calls).toHaveLength(1);
  });

  test('retryOn(status) decides eligibility; undefined status for network errors', async () => {
    const seen: (number | undefined)[] = [];
    const { client, backend, clock } = setup({
      retry: {
        attempts: 3,
        baseDelay: 10,
        jitter: false,
        retryOn: (status) => {
          seen.push(status);
          return status === 418 || status === undefined;
        },
      },
    });
    let n = 0;
    backend.handler = () => {
      n++;
      if (n === 1) return json({}, 418);
      if (n === 2) throw new TypeError('fetch failed');
      return json({ ok: 1 });
    };
    const p = client.get('/t');
    await clock.advance(1000);
    expect((await p).data).toEqual({ ok: 1 });
    expect(seen).toEqual([418, undefined]);
  });

  test('fixed backoff and maxDelay cap', async () => {
    const { client, backend, clock } = setup({
      retry: { attempts: 4, baseDelay: 500, maxDelay: 700, backoff: 'fixed', jitter: false },
    });
    backend.handler = () => json({}, 500);
    const log = record(client, ['retry']);
    const p = settle(client.get('/f'));
    await clock.advance(10_000);
    await p;
    expect(log.map((r) => r.payload.delay)).toEqual([500, 500, 500]);
    const s2 = setup({ retry: { attempts: 4, baseDelay: 500, maxDelay: 700, jitter: false } });
    s2.backend.handler = () => json({}, 500);
    const log2 = record(s2.client, ['retry']);
    const p2 = settle(s2.client.get('/f'));
    await s2.clock.advance(10_000);
    await p2;
    expect(log2.map((r) => r.payload.delay)).toEqual([500, 700, 700]);
  });

  test('a Retry-After (seconds) wins over the computed backoff when respectRetryAfter is true (Errors 4)', async () => {
    const { client, backend, clock } = setup({ retry: { jitter: false, baseDelay: 100 } });
    let n = 0;
    backend.handler = () => (++n === 1 ? json({}, 503, { 'retry-after': '3' }) : json({ ok: 1 }));
    const log = record(client, ['retry']);
    const p = client.get('/ra');
    await clock.advance(2999);
    expect(backend.calls).toHaveLength(1);
    await clock.advance(1);
    expect(backend.calls).toHaveLength(2);
    await p;
    expect(log[0]!.payload.delay).toBe(3000);
  });

  test('Retry-After as an HTTP date', async () => {
    const { client, backend, clock } = setup({ retry: { jitter: false, baseDelay: 100 } });
    let n = 0;
    backend.handler = () =>
      ++n === 1
        ? json({}, 429, { 'retry-after': new Date(clock.now() + 5000).toUTCString() })
        : json({ ok: 1 });
    const log = record(client, ['retry']);
    const p = client.get('/ra');
    await clock.advance(10_000);
    await p;
    // HTTP dates have 1 s resolution: the wait is at most 5000 and more than 4000
    const delay = log[0]!.payload.delay as number;
    expect(delay).toBeGreaterThan(4000);
    expect(delay).toBeLessThanOrEqual(5000);
  });

  test('respectRetryAfter:false ignores Retry-After', async () => {
    const { client, backend, clock } = setup({
      retry: { jitter: false, baseDelay: 100, respectRetryAfter: false },
    });
    let n = 0;
    backend.handler = () => (++n === 1 ? json({}, 503, { 'retry-after': '30' }) : json({ ok: 1 }));
    const log = record(client, ['retry']);
    const p = client.get('/ra');
    await clock.advance(100);
    await p;
    expect(log[0]!.payload.delay).toBe(100);
  });

  test('network errors are retried by default', async () => {
    const { client, backend, clock } = setup({ retry: { jitter: false, baseDelay: 10 } });
    let n = 0;
    backend.handler = () => {
      if (++n === 1) throw new TypeError('fetch failed');
      return json({ ok: 1 });
    };
    const p = client.get('/n');
    await clock.advance(10);
    expect((await p).data).toEqual({ ok: 1 });
  });

  test('the tracker moves pending -> retrying -> success across attempts (spec: Request tracker)', async () => {
    const { client, backend, clock } = setup({ retry: { jitter: false, baseDelay: 10 } });
    let n = 0;
    backend.handler = () => (++n === 1 ? json({}, 500) : json({}));
    const states: string[] = [];
    let tracker: { state: string } | undefined;
    client.on('request', (e) => {
      tracker = e.tracker as unknown as { state: string };
      states.push(tracker.state);
    });
    const p = client.get('/t');
    await clock.advance(5);
    await clock.advance(5);
    await p;
    expect(states).toEqual(['pending']);
    expect(tracker?.state).toBe('success');
  });

  test('a cancel during a retry wait ends the wait at once', async () => {
    const { client, backend, clock } = setup();
    backend.handler = () => json({}, 503);
    const p = client.get('/w');
    await clock.advance(0);
    p.cancel();
    const o = await settle(p);
    expect(o.ok).toBe(false);
    if (!o.ok) expect(o.error).toBeInstanceOf(CancelledError);
    await clock.advance(100_000);
    expect(backend.calls).toHaveLength(1);
    expect(clock.pending).toBe(0);
  });
});

describe('Timeouts (spec: ClientOptions.timeout, RequestOptions.timeout, TimeoutError)', () => {
  test('default timeout is 0: no timer, a slow response still succeeds', async () => {
    const { client, backend, clock } = setup();
    let release!: () => void;
    backend.handler = () =>
      new Promise<Response>((r) => {
        release = () => r(json({ ok: 1 }));
      });
    const p = client.get('/slow');
    await clock.advance(10 * 60_000);
    release();
    expect((await p).data).toEqual({ ok: 1 });
  });

  test('per-attempt timeout rejects with TimeoutError and aborts the attempt', async () => {
    const { client, backend, clock } = setup({ timeout: 100, retry: false });
    backend.handler = () => new Promise<Response>(() => {});
    const p = settle(client.get('/t'));
    await clock.advance(99);
    expect(backend.calls[0]?.signal?.aborted).toBe(false);
    await clock.advance(1);
    const o = await p;
    expect(o.ok).toBe(false);
    if (!o.ok) expect(o.error).toBeInstanceOf(TimeoutError);
    expect(backend.calls[0]?.signal?.aborted).toBe(true);
  });

  test('timeout is per attempt: each retry gets its own timeout', async () => {
    const { client, backend, clock } = setup({
      timeout: 100,
      retry: { attempts: 2, baseDelay: 10, jitter: false },
    });
    let n = 0;
    backend.handler = () => (++n === 1 ? new Promise<Response>(() => {}) : json({ ok: 1 }));
    const p = client.get('/t');
    await clock.advance(100);
    await clock.advance(10);
    expect((await p).data).toEqual({ ok: 1 });
    expect(backend.calls).toHaveLength(2);
  });

  test('RequestOptions.timeout wins over the client default (spec: rule 5)', async () => {
    const { client, backend, clock } = setup({ timeout: 10_000, retry: false });
    backend.handler = () => new Promise<Response>(() => {});
    const p = settle(client.get('/t', { timeout: 50 }));
    await clock.advance(50);
    const o = await p;
    expect(o.ok).toBe(false);
    if (!o.ok) expect(o.error).toBeInstanceOf(TimeoutError);
  });
});
