// Black-box tests of points the spec leaves open or words differently, pinned to the choice the
// core README documents (each test names the spec line and the README section it follows).
import { describe, expect, test } from 'vitest';
import {
  type ApiResponse,
  CacheStore,
  CancelledError,
  HttpError,
  isNetworkError,
} from '../../src/index';
import { deferred, json, ManualClock, record, settle, setup } from './harness';

const ticks = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

describe('README choices where the spec is open', () => {
  test('spec: a string target is "the exact path with its children and query variants"; README: a query written on the target is ignored (the path is the target)', async () => {
    const s = setup();
    s.backend.handler = () => json({});
    for (const url of ['/users?page=1', '/users?page=2', '/users', '/users/7', '/users-x']) {
      await s.client.get(url);
    }
    expect(s.client.invalidate('/users?page=2').sort()).toEqual([
      'GET /users',
      'GET /users/7',
      'GET /users?page=1',
      'GET /users?page=2',
    ]);
    expect(s.client.getCached('GET /users-x')).toBeDefined();
  });

  test('spec RequestOptions lists method and url (required); README: they are the arguments of request(method, url, options) and the named methods, which win over the same fields in options', async () => {
    const s = setup();
    s.backend.handler = () => json({});
    await s.client.request('GET', '/a', { method: 'POST', url: '/b' });
    await s.client.post('/c', { n: 1 }, { method: 'PUT', url: '/d', body: { n: 2 } });
    expect(s.backend.calls.map((c) => [c.method, c.url, c.body])).toEqual([
      ['GET', 'https://api.test/a', undefined],
      ['POST', 'https://api.test/c', '{"n":1}'],
    ]);
  });

  test('spec Errors 3 lists retry statuses for every method; README "Only idempotent methods are retried by default": a POST answered 500 is sent once, a GET three times', async () => {
    const s = setup({ retry: { baseDelay: 10, jitter: false } });
    s.backend.handler = () => json({}, 500);
    const post = settle(s.client.post('/p', {}));
    const get = settle(s.client.get('/g'));
    await s.clock.advance(1000);
    await Promise.all([post, get]);
    expect(s.backend.calls.filter((c) => c.method === 'POST')).toHaveLength(1);
    expect(s.backend.calls.filter((c) => c.method === 'GET')).toHaveLength(3);
  });

  test('spec: `retry` carries error: HttpError; README error table: a retried HTTP failure carries HttpError, a network failure its NetworkError', async () => {
    const s = setup({ retry: { baseDelay: 10, jitter: false } });
    let n = 0;
    s.backend.handler = () => {
      n++;
      if (n === 1) return json({}, 503);
      if (n === 2) throw new TypeError('fetch failed');
      return json({});
    };
    const log = record(s.client, ['retry']);
    const p = s.client.get('/r');
    await s.clock.advance(100);
    await p;
    expect(log[0]!.payload.error).toBeInstanceOf(HttpError);
    expect(isNetworkError(log[1]!.payload.error)).toBe(true);
  });

  test('spec CacheOptions.enabled "false at type level"; README: a partial `cache` merges over the client default, so caching stays on', async () => {
    const a = setup({ cache: { ttl: 5000 } });
    await a.client.get('/x');
    await a.client.get('/x');
    expect(a.backend.calls).toHaveLength(1);
    const b = setup();
    await b.client.get('/x', { cache: { ttl: 5000 } });
    await b.clock.advance(4999);
    await b.client.get('/x', { cache: { ttl: 5000 } });
    expect(b.backend.calls).toHaveLength(1);
  });

  test('spec rule 5 puts a recommendation above the client default timeout; README: it may tighten a configured client timeout, never loosen it', async () => {
    const s = setup({ intelligence: { adaptiveTimeout: true }, timeout: 300, retry: false });
    s.backend.handler = () =>
      new Promise<Response>((r) => {
        s.clock.setTimeout(() => r(json({})), 200);
      });
    for (let i = 0; i < 5; i++) {
      const p = s.client.get(`/t?i=${i}`, { cache: false });
      await s.clock.advance(200);
      await p;
    }
    s.backend.handler = () => new Promise<Response>(() => {});
    const p = settle(s.client.get('/t', { cache: false }));
    await s.clock.advance(300); // recommendation would be 600: the client's 300 holds
    expect((await p).ok).toBe(false);
  });

  test('spec request-rejected "by group or all cancellation"; README: a caller cancel() of a queued job also ends it rejected with request-rejected', async () => {
    const s = setup({ scheduler: { concurrency: 1 }, cache: false });
    s.backend.handler = () => new Promise<Response>(() => {});
    const busy = settle(s.client.get('/busy'));
    const q = s.client.get('/q');
    await ticks();
    const log = record(s.client, ['cancel', 'request-dequeued', 'request-rejected']);
    q.cancel();
    const o = await settle(q);
    expect(!o.ok && o.error instanceof CancelledError).toBe(true);
    expect(log.map((l) => l.event)).toEqual(['cancel', 'request-dequeued', 'request-rejected']);
    expect(s.client.scheduler().stats()).toMatchObject({ queued: 0, rejected: 1 });
    s.client.cancelAll();
    await busy;
  });

  test('spec lists only "probe succeeds -> closed"; README: a probe answered with a non-countable 4xx also closes (the endpoint is reachable)', async () => {
    const s = setup({
      retry: false,
      cache: false,
      circuitBreaker: { failureThreshold: 1, resetTimeout: 100 },
    });
    s.backend.handler = () => json({}, 500);
    await settle(s.client.get('/a'));
    await s.clock.advance(100);
    s.backend.handler = () => json({}, 404);
    await settle(s.client.get('/a'));
    expect(s.client.circuitBreaker().status('GET', '/a').state).toBe('closed');
  });

  test('spec CircuitStatus.openedAt "when the circuit last opened"; README: present while open or halfOpen only', async () => {
    const s = setup({
      retry: false,
      cache: false,
      circuitBreaker: { failureThreshold: 1, resetTimeout: 100 },
    });
    s.backend.handler = () => json({}, 500);
    await settle(s.client.get('/a'));
    expect(s.client.circuitBreaker().status('GET', '/a').openedAt).toBe(s.clock.now());
    await s.clock.advance(100);
    s.backend.handler = () => json({});
    await s.client.get('/a');
    expect(s.client.circuitBreaker().status('GET', '/a').openedAt).toBeUndefined();
  });

  test('spec changeCooldown "between two decisions"; README: the cooldown paces ceiling changes, the throttle is obeyed at once', async () => {
    const s = setup({
      scheduler: { concurrency: 4 },
      adaptive: {
        enabled: true,
        concurrency: true,
        rateLimit: true,
        degradeSamples: 1,
        outcomeWindow: 2,
        latencyWindow: 4,
      },
      cache: false,
    });
    s.backend.handler = () => json({}, 429);
    for (let i = 0; i < 2; i++) await settle(s.client.get(`/e?i=${i}`, { retry: false }));
    const st = s.client.adaptive().endpoint('GET', '/e')!;
    expect(st.retryMode).toBe('throttled');
    expect(st.effective).toBe(3);
  });
});

describe('CacheStore(defaultTtl?) (spec: Standalone utilities)', () => {
  test('entries written without a ttl expire after defaultTtl; subscribers get write updates', () => {
    const clock = new ManualClock();
    const store = new CacheStore(500, { clock });
    const updates: string[] = [];
    const off = store.subscribe('GET https://a.test/x', (u) => updates.push(u.type));
    const response: ApiResponse<unknown> = {
      data: 1,
      status: 200,
      statusText: 'OK',
      headers: new Headers(),
    };
    const entry = store.set('GET https://a.test/x', response);
    expect(entry.expiresAt - entry.storedAt).toBe(500);
    expect(store.get('GET https://a.test/x')?.response).toBe(response);
    expect(updates).toEqual(['write']);
    off();
    store.set('GET https://a.test/x', response);
    expect(updates).toEqual(['write']);
  });
});

describe('Stats inside listeners (spec: SchedulerStats "active: jobs holding a network slot now")', () => {
  test('request-started sees its own job as active', async () => {
    const s = setup({ scheduler: { concurrency: 2 } });
    const d = deferred();
    s.backend.handler = () => d.promise;
    const seen: number[] = [];
    s.client.on('request-started', () => seen.push(s.client.scheduler().stats().active));
    const p = s.client.get('/a');
    await ticks();
    d.release(json({}));
    await p;
    expect(seen).toEqual([1]);
  });
});
