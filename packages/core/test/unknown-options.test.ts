// A misspelt option was dropped in silence: `baseUrl` (axios and others spell it so) left the
// client without a base URL, `retry: { retries: 5 }` kept 3 attempts, `cache: { staleTime }`
// (TanStack's name) kept the 30 s ttl, `{ query }` for `params` sent no query. TypeScript
// catches these; JavaScript did not. Every options object now refuses a key it does not know,
// naming it and listing the keys it takes.
import { describe, expect, test } from 'vitest';
import {
  createBaseClient,
  createClient,
  type RequestOptions,
  withAdaptive,
  withCircuitBreaker,
  withIntelligence,
  withScheduler,
} from '../src/index';
import { debugOf, flush, makeClient, settle } from './helpers';

const fetch = async () => new Response('{}', { headers: { 'content-type': 'application/json' } });

/** The RangeError of an unknown key: the key, and the list with the one that was meant. */
function unknownKey(where: string, key: string, meant?: string): RegExp {
  const list = meant === undefined ? '[^,]+(, [^,]+)*' : `(.*, )?${meant}(, .*)?`;
  return new RegExp(
    `^keel: \`${where.replace('.', '\\.')}\` must be an object with only the keys ${list}, got "${key}"$`,
  );
}

describe('client options: an unknown key is a RangeError from createClient', () => {
  test.each([
    ['baseUrl', { baseUrl: 'https://api.test' }, 'options', 'baseUrl', 'baseURL'],
    ['timeOut', { timeout: 1, timeOut: 5 }, 'options', 'timeOut', 'timeout'],
    ['axios name', { params: { a: 1 } }, 'options', 'params', undefined],
    ['retry', { retry: { retries: 5 } }, 'retry', 'retries', undefined],
    ['retry, prefix', { retry: { attempt: 5 } }, 'retry', 'attempt', 'attempts'],
    ['cache', { cache: { staleTime: 1000 } }, 'cache', 'staleTime', undefined],
    ['intelligence', { intelligence: { enable: false } }, 'intelligence', 'enable', 'enabled'],
    [
      'circuitBreaker',
      { circuitBreaker: { threshold: 3 } },
      'circuitBreaker',
      'threshold',
      undefined,
    ],
    ['scheduler', { scheduler: { concurency: 2 } }, 'scheduler', 'concurency', undefined],
    [
      'scheduler.rateLimit',
      { scheduler: { rateLimit: { request: 1, interval: 10 } } },
      'scheduler.rateLimit',
      'request',
      'requests',
    ],
    [
      'adaptive',
      { adaptive: { enabled: true, highLatency: 1 } },
      'adaptive',
      'highLatency',
      'highLatencyMs',
    ],
  ])('%s', (_, options, where, key, meant) => {
    const make = () => createClient({ fetch, ...options } as never);
    expect(make).toThrow(RangeError);
    expect(make).toThrow(unknownKey(where, key, meant));
  });

  test('createBaseClient and the with... features check theirs', () => {
    expect(() => createBaseClient({ fetch, baseUrl: 'https://a.test' } as never)).toThrow(
      unknownKey('options', 'baseUrl', 'baseURL'),
    );
    expect(() => withIntelligence({ adaptiveTimeOut: true } as never)).toThrow(
      unknownKey('intelligence', 'adaptiveTimeOut', 'adaptiveTimeout'),
    );
    expect(() => withCircuitBreaker({ resetTimeOut: 1 } as never)).toThrow(
      unknownKey('circuitBreaker', 'resetTimeOut', 'resetTimeout'),
    );
    expect(() => withScheduler({ priorities: true } as never)).toThrow(
      unknownKey('scheduler', 'priorities', undefined),
    );
    expect(() => withAdaptive({ retries: true } as never)).toThrow(
      unknownKey('adaptive', 'retries', undefined),
    );
  });

  test('every documented key is accepted', () => {
    expect(() =>
      createClient({
        baseURL: 'https://api.test',
        headers: { a: 'b' },
        cache: { enabled: true, ttl: 1, strategy: 'cache-first', gcTime: 10, maxEntries: 5 },
        retry: {
          attempts: 2,
          baseDelay: 1,
          maxDelay: 2,
          backoff: 'fixed',
          jitter: false,
          retryOn: () => true,
          respectRetryAfter: true,
          maxRetryAfter: 10,
          methods: ['GET'],
        },
        timeout: 1,
        deadline: 2,
        responseType: 'json',
        maxResponseBytes: 10,
        fetch,
        intelligence: { enabled: true, adaptiveTimeout: true, adaptiveStaleWhileRevalidate: true },
        circuitBreaker: { enabled: true, failureThreshold: 2, resetTimeout: 10 },
        scheduler: {
          enabled: true,
          concurrency: 2,
          priority: true,
          hosts: { 'api.test': 1, Any_Host: 2 },
          rateLimit: { requests: 1, interval: 10 },
        },
        adaptive: { enabled: true, concurrency: true, retry: true, rateLimit: true },
        random: Math.random,
        onError: () => {},
        credentials: 'include',
        redirect: 'follow',
        mode: 'cors',
        fetchCache: 'no-store',
        keepalive: false,
        fetchPriority: 'high',
        integrity: '',
        referrerPolicy: 'no-referrer',
      } as never),
    ).not.toThrow(/./);
  });
});

describe('request options: an unknown key rejects the request, with nothing sent or kept', () => {
  async function refused(
    options: Record<string, unknown>,
    where: string,
    key: string,
    meant?: string,
  ) {
    const t = makeClient({}, { handler: () => new Response('ok') });
    const p = t.client.get('/x', options as RequestOptions);
    expect(typeof p.cancel).toBe('function');
    const outcome = await settle(p);
    expect(outcome.state).toBe('rejected');
    const reason = (outcome as { reason: Error }).reason;
    expect(reason).toBeInstanceOf(RangeError);
    expect(reason.message).toMatch(unknownKey(where, key, meant));
    await flush();
    expect(t.fake.calls).toHaveLength(0);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
    expect(t.clock.live).toBe(0);
  }

  test('`query` for `params` sends no request without its query', async () => {
    await refused({ query: { page: 2 } }, 'options', 'query');
  });
  test('`param` is close to `params`', async () => {
    await refused({ param: { page: 2 } }, 'options', 'param', 'params');
  });
  test('an unknown key set to undefined is still unknown', async () => {
    await refused({ query: undefined }, 'options', 'query');
    expect(() => createClient({ fetch, timeOut: undefined } as never)).toThrow(
      unknownKey('options', 'timeOut', 'timeout'),
    );
  });
  test('null options are a TypeError, not no options', async () => {
    const client = createClient({ fetch, baseURL: 'https://api.test' });
    await expect(client.get('/x', null as never)).rejects.toThrow(
      /^keel: `options` must be an object, got null$/,
    );
  });
  test('`Headers` by case', async () => {
    await refused({ Headers: { a: 'b' } }, 'options', 'Headers', 'headers');
  });
  test('cache', async () => {
    await refused({ cache: { stratgy: 'stale-while-revalidate' } }, 'cache', 'stratgy');
  });
  test('retry', async () => {
    await refused({ retry: { retryon: () => false } }, 'retry', 'retryon', 'retryOn');
  });
  test('scheduler', async () => {
    await refused({ scheduler: { groupe: 'a' } }, 'scheduler', 'groupe', 'group');
  });

  test("the spec's fields, `method` and `url` among them, are known", async () => {
    const t = makeClient({}, { handler: () => new Response('ok') });
    const options: RequestOptions = {
      method: 'GET',
      url: '/x',
      baseURL: 'https://api.test',
      headers: { a: 'b' },
      params: { q: 1 },
      signal: new AbortController().signal,
      timeout: 10,
      deadline: 20,
      cache: { ttl: 5 },
      retry: false,
      tags: ['t'],
      priority: 'high',
      scheduler: { group: 'g' },
      responseType: 'text',
      maxResponseBytes: 100,
      credentials: 'omit',
    };
    await expect(t.client.get('/x', options)).resolves.toMatchObject({ status: 200 });
  });
});

describe('other options objects', () => {
  test('invalidate', () => {
    const client = createClient({ fetch, baseURL: 'https://api.test' });
    expect(() => client.invalidate('/x', { refech: false } as never)).toThrow(
      unknownKey('options', 'refech', 'refetch'),
    );
  });
});
