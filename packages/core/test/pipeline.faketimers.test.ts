import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { CancelledError, createClient, TimeoutError } from '../src/index';
import { createFakeFetch } from './helpers';

// The default clock reads the timer globals at call time, so vitest's fake timers drive a client
// created without an injected clock.
describe('with vitest fake timers and the default clock', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(Date.UTC(2024, 0, 1));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  test('ttl expiry follows the fake system time', async () => {
    const fake = createFakeFetch({ handler: () => Response.json(1) });
    const client = createClient({
      baseURL: 'https://a.test',
      fetch: fake.fetch,
      cache: { ttl: 1000 },
    });
    await client.get('/x');
    vi.advanceTimersByTime(999);
    await client.get('/x');
    expect(fake.calls).toHaveLength(1);
    vi.advanceTimersByTime(1);
    await client.get('/x');
    expect(fake.calls).toHaveLength(2);
  });

  test('timeout, retry wait and Retry-After as an HTTP date run on fake timers', async () => {
    let n = 0;
    const fake = createFakeFetch({
      handler: () => {
        n++;
        if (n === 1) return undefined; // times out
        if (n === 2) {
          return new Response('', {
            status: 503,
            headers: { 'retry-after': new Date(Date.UTC(2024, 0, 1, 0, 0, 5)).toUTCString() },
          });
        }
        return Response.json('ok');
      },
    });
    const client = createClient({
      baseURL: 'https://a.test',
      fetch: fake.fetch,
      timeout: 100,
      retry: { jitter: false, baseDelay: 10 },
    });
    const delays: number[] = [];
    const errors: unknown[] = [];
    client.on('retry', (e) => {
      delays.push(e.delay);
      errors.push(e.error);
    });
    const p = client.get('/t');
    await vi.advanceTimersByTimeAsync(100); // attempt 1 times out
    expect(errors[0]).toBeInstanceOf(TimeoutError);
    await vi.advanceTimersByTimeAsync(10); // backoff, attempt 2 answers 503 + Retry-After
    expect(fake.calls).toHaveLength(2);
    // the date is 00:00:05; the 503 arrived at 00:00:00.110
    await vi.advanceTimersByTimeAsync(4889);
    expect(fake.calls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    await expect(p).resolves.toMatchObject({ data: 'ok' });
    expect(delays).toEqual([10, 4890]);
    expect(vi.getTimerCount()).toBe(0);
  });

  test('cancel() during a retry wait leaves no timer', async () => {
    const fake = createFakeFetch({ handler: () => new Response('', { status: 503 }) });
    const client = createClient({ baseURL: 'https://a.test', fetch: fake.fetch, timeout: 500 });
    const p = client.get('/w');
    await vi.advanceTimersByTimeAsync(0);
    expect(vi.getTimerCount()).toBe(1); // the retry wait (the attempt's timeout was cleared)
    p.cancel();
    await expect(p).rejects.toBeInstanceOf(CancelledError);
    expect(vi.getTimerCount()).toBe(0);
  });
});
