import { describe, expect, test } from 'vitest';
import { errorOf } from '../errors/errors.fixture';
import { HttpError } from '../errors/http-error';
import { TimeoutError } from '../errors/timeout-error';
import {
  decideRetry,
  RETRY_DEFAULTS,
  type ResolvedRetryOptions,
  resolveRetryOptions,
} from './retry-policy';

const options: ResolvedRetryOptions = { ...RETRY_DEFAULTS, jitter: false, baseDelay: 100 };
const http = (status: number, headers?: Record<string, string>) =>
  errorOf.http(status, { statusText: 'x', headers: new Headers(headers) });
const now = Date.UTC(2024, 0, 1);

describe('resolveRetryOptions', () => {
  test('defaults', () => {
    expect(resolveRetryOptions()).toEqual({
      attempts: 3,
      baseDelay: 1000,
      maxDelay: 30000,
      backoff: 'exponential',
      jitter: true,
      retryOn: undefined,
      respectRetryAfter: true,
      maxRetryAfter: 60_000,
      methods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'],
    });
  });

  test('true keeps the base, false is a single attempt', () => {
    expect(resolveRetryOptions(true, options)).toBe(options);
    expect(resolveRetryOptions(false, options)).toEqual({ ...options, attempts: 1 });
  });

  test('an object layers over the base', () => {
    expect(resolveRetryOptions({ attempts: 7 }, options)).toEqual({ ...options, attempts: 7 });
  });

  test('bad values name the field', () => {
    expect(() => resolveRetryOptions({ attempts: -1 })).toThrow(RangeError);
    expect(() => resolveRetryOptions({ attempts: -1 })).toThrow(/attempts/);
    expect(() => resolveRetryOptions({ attempts: 'x' as never })).toThrow(TypeError);
    expect(() => resolveRetryOptions({ baseDelay: -1 })).toThrow(/baseDelay/);
    expect(() => resolveRetryOptions({ maxDelay: Number.NaN })).toThrow(/maxDelay/);
    expect(() => resolveRetryOptions(5 as never)).toThrow(TypeError);
    expect(() => resolveRetryOptions({ methods: 'POST' as never })).toThrow(
      /`retry.methods` must be an array/,
    );
    expect(() => resolveRetryOptions({ methods: ['FETCH' as never] })).toThrow(RangeError);
    expect(() => resolveRetryOptions({ methods: ['FETCH' as never] })).toThrow(/"FETCH"/);
    // biome-ignore lint/suspicious/noSparseArray: a hole in the list is a missing method
    expect(() => resolveRetryOptions({ methods: [, 'GET'] as never })).toThrow(
      /`retry.methods\[0\]` must be an HTTP method, got undefined/,
    );
  });

  test('methods are normalized to upper case and frozen', () => {
    const r = resolveRetryOptions({ methods: ['post' as never, 'GET'] });
    expect(r.methods).toEqual(['POST', 'GET']);
    expect(Object.isFrozen(r.methods)).toBe(true);
  });
});

describe('decideRetry', () => {
  test.each([408, 429, 500, 502, 503, 504])('retries status %i by default', (status) => {
    expect(decideRetry({ error: http(status), options, attempts: 1 })).toEqual({
      retry: true,
      delay: 100,
      reason: 'backoff',
    });
  });

  test.each([400, 401, 403, 404, 409, 422, 501, 505])(
    'does not retry status %i by default',
    (status) => {
      expect(decideRetry({ error: http(status), options, attempts: 1 })).toMatchObject({
        retry: false,
        reason: 'not-retriable',
      });
    },
  );

  test('network errors and timeouts are retried', () => {
    expect(decideRetry({ error: new TypeError('fetch failed'), options, attempts: 1 }).retry).toBe(
      true,
    );
    expect(decideRetry({ error: errorOf.timeout(5), options, attempts: 1 }).retry).toBe(true);
  });

  test('cancellation, parse errors and circuit rejections are never retried', () => {
    for (const error of [
      errorOf.cancelled(),
      new DOMException('x', 'AbortError'),
      errorOf.parse(200, '{', new SyntaxError('x')),
      errorOf.circuitOpen('GET /x'),
    ]) {
      expect(decideRetry({ error, options, attempts: 1 }).retry).toBe(false);
    }
  });

  test('attempts count includes the first: attempts=3 allows two retries', () => {
    expect(decideRetry({ error: http(503), options, attempts: 2 }).retry).toBe(true);
    expect(decideRetry({ error: http(503), options, attempts: 3 })).toMatchObject({
      retry: false,
      reason: 'attempts-exhausted',
    });
  });

  test('retry:false (attempts 1) fails on the first attempt', () => {
    const single = resolveRetryOptions(false, options);
    expect(decideRetry({ error: http(503), options: single, attempts: 1 }).retry).toBe(false);
  });

  test('retryOn decides eligibility; undefined status for network errors', () => {
    const seen: (number | undefined)[] = [];
    const retryOn = (s: number | undefined) => {
      seen.push(s);
      return s === 404;
    };
    const o = { ...options, retryOn };
    expect(decideRetry({ error: http(404), options: o, attempts: 1 }).retry).toBe(true);
    expect(decideRetry({ error: http(503), options: o, attempts: 1 }).retry).toBe(false);
    expect(decideRetry({ error: new TypeError('x'), options: o, attempts: 1 }).retry).toBe(false);
    expect(seen).toEqual([404, 503, undefined]);
  });

  test('exponential backoff grows with attempts, capped by maxDelay', () => {
    const o = { ...options, maxDelay: 300 };
    const delays = [1, 2, 3].map(
      (attempts) =>
        decideRetry({ error: http(503), options: { ...o, attempts: 10 }, attempts }).delay,
    );
    expect(delays).toEqual([100, 200, 300]);
  });

  test('maxDelay also caps a baseDelay configured above it', () => {
    const o = { ...options, baseDelay: 5000, maxDelay: 1000 };
    expect(decideRetry({ error: http(503), options: o, attempts: 1 }).delay).toBe(1000);
  });

  test('jitter uses the injected random', () => {
    const o = { ...options, jitter: true };
    expect(decideRetry({ error: http(503), options: o, attempts: 2, random: () => 0 }).delay).toBe(
      100,
    );
    expect(
      decideRetry({ error: http(503), options: o, attempts: 2, random: () => 0.5 }).delay,
    ).toBe(150);
  });

  test('Retry-After seconds win over backoff when respectRetryAfter', () => {
    expect(
      decideRetry({ error: http(503, { 'retry-after': '7' }), options, attempts: 1, now }),
    ).toEqual({ retry: true, delay: 7000, reason: 'retry-after' });
  });

  test('Retry-After HTTP date wins over backoff, measured from now', () => {
    const at = new Date(now + 2000).toUTCString();
    expect(
      decideRetry({ error: http(429, { 'retry-after': at }), options, attempts: 1, now }),
    ).toEqual({ retry: true, delay: 2000, reason: 'retry-after' });
  });

  test('Retry-After wins even above maxDelay', () => {
    const o = { ...options, maxDelay: 500 };
    expect(
      decideRetry({ error: http(503, { 'retry-after': '60' }), options: o, attempts: 1, now })
        .delay,
    ).toBe(60_000);
  });

  test('Retry-After is ignored when respectRetryAfter is false', () => {
    const o = { ...options, respectRetryAfter: false };
    expect(
      decideRetry({ error: http(503, { 'retry-after': '7' }), options: o, attempts: 1, now }),
    ).toEqual({ retry: true, delay: 100, reason: 'backoff' });
  });

  test('an unparsable Retry-After falls back to backoff', () => {
    expect(
      decideRetry({ error: http(503, { 'retry-after': 'later' }), options, attempts: 1, now }),
    ).toEqual({ retry: true, delay: 100, reason: 'backoff' });
  });

  test('Retry-After does not make a non-retriable status retriable', () => {
    expect(
      decideRetry({ error: http(400, { 'retry-after': '1' }), options, attempts: 1, now }).retry,
    ).toBe(false);
  });

  test('a method outside `methods` retries only what the server did not process', () => {
    const refused = new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    });
    const reset = new TypeError('terminated', {
      cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
    });
    const decide = (error: unknown, method: 'POST' | 'PATCH' | 'PUT') =>
      decideRetry({ error, options, attempts: 1, method, now });
    expect(decide(http(503), 'POST')).toEqual({ retry: false, delay: 0, reason: 'not-idempotent' });
    expect(decide(http(500), 'PATCH').reason).toBe('not-idempotent');
    expect(decide(reset, 'POST').reason).toBe('not-idempotent');
    expect(decide(errorOf.timeout(5), 'POST').reason).toBe('not-idempotent');
    expect(decide(http(429), 'POST').retry).toBe(true);
    expect(decide(http(503, { 'retry-after': '2' }), 'POST')).toEqual({
      retry: true,
      delay: 2000,
      reason: 'retry-after',
    });
    expect(decide(refused, 'PATCH').retry).toBe(true);
    // an AggregateError (dual-stack connect) carries the code in `errors`
    const both = new TypeError('fetch failed', {
      cause: new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })]),
    });
    expect(decide(both, 'POST').retry).toBe(true);
    expect(decide(http(503), 'PUT').retry).toBe(true);
    // without a method (standalone use) the request is judged idempotent
    expect(decideRetry({ error: http(503), options, attempts: 1 }).retry).toBe(true);
  });

  test('retryOn can still refuse what the method rule allows', () => {
    const o = { ...options, retryOn: () => false };
    expect(decideRetry({ error: http(429), options: o, attempts: 1, method: 'POST' }).retry).toBe(
      false,
    );
  });

  test('retryOn gets the error as its second argument', () => {
    const seen: unknown[] = [];
    const o = {
      ...options,
      retryOn: (_s: number | undefined, e: unknown) => {
        seen.push(e);
        return !(e instanceof TimeoutError);
      },
    };
    const timeout = errorOf.timeout(5);
    const net = new TypeError('fetch failed');
    expect(decideRetry({ error: timeout, options: o, attempts: 1 }).retry).toBe(false);
    expect(decideRetry({ error: net, options: o, attempts: 1 }).retry).toBe(true);
    expect(seen).toEqual([timeout, net]);
  });

  test('redirect failures are never retried', () => {
    for (const message of ['redirect count exceeded', 'unexpected redirect']) {
      const error = new TypeError('fetch failed', { cause: new Error(message) });
      expect(decideRetry({ error, options, attempts: 1 })).toMatchObject({
        retry: false,
        reason: 'not-retriable',
      });
    }
  });

  test('an HttpError without a status is judged like a failure without a response', () => {
    expect(decideRetry({ error: errorOf.http(), options, attempts: 1 })).toEqual({
      retry: true,
      delay: 100,
      reason: 'backoff',
    });
    expect(
      decideRetry({ error: errorOf.http(), options, attempts: 1, method: 'POST' }).reason,
    ).toBe('not-idempotent');
  });

  test('baseDelayFactor scales the base delay, capped by maxBaseDelay', () => {
    expect(decideRetry({ error: http(503), options, attempts: 1, baseDelayFactor: 4 }).delay).toBe(
      400,
    );
    expect(
      decideRetry({ error: http(503), options, attempts: 1, baseDelayFactor: 4, maxBaseDelay: 250 })
        .delay,
    ).toBe(250);
  });
});

describe('an error that names no request', () => {
  test("is judged as an idempotent method's ('' is no method), as before method and url were strings", () => {
    const options = resolveRetryOptions({ jitter: false });
    const bare = new HttpError({ status: 503 });
    expect(bare.method).toBe('');
    expect(decideRetry({ error: bare, options, attempts: 1 }).retry).toBe(true);
    expect(decideRetry({ error: new TimeoutError(), options, attempts: 1 }).retry).toBe(true);
    const post = new HttpError({ method: 'POST', url: 'https://a.test/x' }, { status: 503 });
    expect(decideRetry({ error: post, options, attempts: 1 })).toMatchObject({
      retry: false,
      reason: 'not-idempotent',
    });
  });
});

describe('decideRetry with options written as the spec lists RetryOptions', () => {
  // The spec's fields only: no retryOn, maxRetryAfter or methods. Each takes its default.
  const { retryOn: _r, maxRetryAfter: _m, methods: _x, ...spec } = options;

  test('retryOn: the default statuses; methods: the idempotent ones', () => {
    expect(decideRetry({ error: http(503), options: spec, attempts: 1 })).toEqual({
      retry: true,
      delay: 100,
      reason: 'backoff',
    });
    expect(decideRetry({ error: http(404), options: spec, attempts: 1 }).reason).toBe(
      'not-retriable',
    );
    expect(
      decideRetry({ error: http(500), options: spec, attempts: 1, method: 'POST' }).reason,
    ).toBe('not-idempotent');
  });

  test('maxRetryAfter: the default 60 s caps a Retry-After (it was uncapped)', () => {
    expect(
      decideRetry({ error: http(503, { 'retry-after': '120' }), options: spec, attempts: 1 }),
    ).toEqual({ retry: false, delay: 0, reason: 'retry-after-too-long' });
    expect(
      decideRetry({ error: http(503, { 'retry-after': '60' }), options: spec, attempts: 1 }),
    ).toEqual({ retry: true, delay: 60_000, reason: 'retry-after' });
  });
});
