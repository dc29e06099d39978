import { describe, expect, test } from 'vitest';
import { RETRY_DEFAULTS } from './attempt/retry-policy';
import { CACHE_DEFAULTS } from './cache/options';
import { resolveClientOptions } from './config';
import { systemClock } from './internal/clock';
import type { ClientOptions } from './types/options';

const fetch = async () => new Response('');

describe('resolveClientOptions', () => {
  test('documented defaults', () => {
    const c = resolveClientOptions();
    expect(c.cache).toEqual({ enabled: true, ttl: 30000, strategy: 'cache-first' });
    expect(c.retry).toMatchObject({
      attempts: 3,
      baseDelay: 1000,
      maxDelay: 30000,
      backoff: 'exponential',
      jitter: true,
      respectRetryAfter: true,
    });
    expect(c.timeout).toBe(0);
    expect(c.baseURL).toBeUndefined();
    expect(c.clock).toBe(systemClock);
    expect(CACHE_DEFAULTS).toEqual(c.cache);
    expect(RETRY_DEFAULTS).toEqual(c.retry);
  });

  test('partial cache and retry options layer over the defaults', () => {
    const c = resolveClientOptions({ fetch, cache: { ttl: 10 }, retry: { attempts: 5 } });
    expect(c.cache).toEqual({ enabled: true, ttl: 10, strategy: 'cache-first' });
    expect(c.retry.attempts).toBe(5);
    expect(c.retry.baseDelay).toBe(1000);
  });

  test('client header names are kept as written', () => {
    expect(resolveClientOptions({ fetch, headers: { 'X-Key': 'v' } }).headers).toEqual({
      'X-Key': 'v',
    });
  });

  test.each<[string, ClientOptions, RegExp, ErrorConstructor]>([
    ['negative timeout', { timeout: -1 }, /timeout/, RangeError],
    ['NaN timeout', { timeout: Number.NaN }, /timeout/, RangeError],
    ['non-numeric timeout', { timeout: '5' as never }, /timeout/, TypeError],
    ['negative ttl', { cache: { ttl: -5 } }, /ttl/, RangeError],
    ['infinite ttl', { cache: { ttl: Number.POSITIVE_INFINITY } }, /ttl/, RangeError],
    ['non-numeric ttl', { cache: { ttl: 'x' as never } }, /ttl/, TypeError],
    ['zero attempts', { retry: { attempts: 0 } }, /attempts/, RangeError],
    ['fractional attempts', { retry: { attempts: 1.5 } }, /attempts/, RangeError],
    ['non-numeric attempts', { retry: { attempts: 'x' as never } }, /attempts/, TypeError],
    ['negative baseDelay', { retry: { baseDelay: -1 } }, /baseDelay/, RangeError],
    ['negative maxDelay', { retry: { maxDelay: -1 } }, /maxDelay/, RangeError],
    ['bad backoff', { retry: { backoff: 'linear' as never } }, /backoff/, RangeError],
    ['bad strategy', { cache: { strategy: 'network-only' as never } }, /strategy/, RangeError],
    ['non-function retryOn', { retry: { retryOn: 5 as never } }, /retryOn/, TypeError],
    ['relative baseURL', { baseURL: '/api' }, /baseURL/, RangeError],
    ['non-function fetch', { fetch: 'x' as never }, /fetch/, TypeError],
    ['non-object headers', { headers: 'x' as never }, /headers/, TypeError],
    ['null headers', { headers: null as never }, /headers/, TypeError],
    ['empty-string headers', { headers: '' as never }, /headers/, TypeError],
    ['non-string header', { headers: { a: {} as never } }, /header/, TypeError],
    ['bad clock', { clock: {} as never }, /clock/, TypeError],
    ['null clock', { clock: null as never }, /clock/, TypeError],
    ['non-object options', 5 as never, /options/, TypeError],
  ])('%s throws naming the option', (_name, options, message, type) => {
    const run = () =>
      resolveClientOptions(typeof options === 'object' ? { fetch, ...options } : options);
    expect(run).toThrow(type);
    expect(run).toThrow(message);
  });
});
