/**
 * Every fault of the chaos server against a real client over real sockets: what the caller gets
 * (always a typed KeelError naming the request), what is retried, and that a slow or endless
 * response is really cut off (the server sees the client leave).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  createClient,
  HttpError,
  KeelError,
  NetworkError,
  ParseError,
  ResponseTooLargeError,
  TimeoutError,
} from '../../src/index';
import { compressedClock } from '../helpers';
import { BYTES, type FaultServer, refusedURL, startFaultServer } from './fault-server';

let server: FaultServer;
beforeAll(async () => {
  server = await startFaultServer();
});
afterAll(() => server.close());

const hits = (path: string) => server.requests.get(path) ?? 0;

async function failure(p: Promise<unknown>): Promise<KeelError> {
  const outcome = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(outcome).toBeInstanceOf(KeelError);
  return outcome as KeelError;
}

describe('chaos: each fault over real sockets', () => {
  test('reset before headers: NetworkError ECONNRESET; a GET is retried, a POST is not', async () => {
    const client = createClient({ baseURL: server.url, clock: compressedClock() });
    const before = hits('/reset-headers');
    const err = (await failure(client.get('/reset-headers'))) as NetworkError;
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ code: 'ECONNRESET', method: 'GET' });
    expect(err.url).toBe(`${server.url}/reset-headers`);
    expect(hits('/reset-headers') - before).toBe(3);
    const mid = hits('/reset-headers');
    expect(await failure(client.post('/reset-headers', { a: 1 }))).toBeInstanceOf(NetworkError);
    expect(hits('/reset-headers') - mid).toBe(1);
  });

  test('reset mid-body: NetworkError, retried for a GET', async () => {
    const client = createClient({ baseURL: server.url, clock: compressedClock() });
    const before = hits('/reset-body');
    const err = (await failure(client.get('/reset-body'))) as NetworkError;
    expect(err).toBeInstanceOf(NetworkError);
    expect(['ECONNRESET', 'UND_ERR_SOCKET']).toContain(err.code);
    expect(hits('/reset-body') - before).toBe(3);
  });

  test('a short body (connection closed with bytes owed): NetworkError', async () => {
    const client = createClient({ baseURL: server.url, retry: false });
    const err = (await failure(client.get('/short-body'))) as NetworkError;
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.code).toBe('UND_ERR_SOCKET');
  });

  test('invalid JSON: ParseError, not retried', async () => {
    const client = createClient({ baseURL: server.url });
    const before = hits('/invalid-json');
    const err = (await failure(client.get('/invalid-json'))) as ParseError;
    expect(err).toBeInstanceOf(ParseError);
    expect(err.body).toBe('{"a": [1, 2');
    expect(hits('/invalid-json') - before).toBe(1);
  });

  test('slow headers: a per-attempt timeout, then the deadline; the server sees the client leave', async () => {
    const client = createClient({ baseURL: server.url, timeout: 100, retry: false });
    const aborted = server.aborted;
    const received = hits('/slow-headers');
    const err = (await failure(client.get('/slow-headers?ms=10000'))) as TimeoutError;
    expect(err).toMatchObject({ name: 'TimeoutError', kind: 'attempt', timeout: 100 });
    const d = createClient({ baseURL: server.url, deadline: 150 });
    const late = (await failure(d.get('/slow-headers?ms=10000'))) as TimeoutError;
    expect(late).toMatchObject({ name: 'TimeoutError', kind: 'deadline', timeout: 150 });
    // Every request that reached the server was abandoned by the client (none left hanging).
    await expect
      .poll(() => server.aborted - aborted, { timeout: 5000 })
      .toBe(hits('/slow-headers') - received);
  });

  test('a trickled body: read whole when in time, cut off by a timeout mid-body', async () => {
    const client = createClient({ baseURL: server.url, retry: false });
    const { data } = await client.get<string>('/trickle?chunks=5&ms=5');
    expect(data).toHaveLength(80);
    const aborted = server.aborted;
    const received = hits('/trickle');
    const err = await failure(client.get('/trickle?chunks=100&ms=20', { timeout: 150 }));
    expect(err).toBeInstanceOf(TimeoutError);
    await expect
      .poll(() => server.aborted - aborted, { timeout: 5000 })
      .toBe(hits('/trickle') - received);
  });

  test('no answer: the deadline ends it (the default timeout, 0, never would)', async () => {
    const client = createClient({ baseURL: server.url, deadline: 100 });
    const before = hits('/no-answer');
    const err = (await failure(client.get('/no-answer'))) as TimeoutError;
    expect(err).toMatchObject({ kind: 'deadline', timeout: 100 });
    expect(hits('/no-answer') - before).toBe(1);
  });

  test.each([
    ['delta-seconds', '2', 2000],
    ['fractional seconds', '0.25', 250],
    ['an HTTP date', 'DATE+3', 3000],
    ['a past date', 'Thu, 01 Jan 1970 00:00:00 GMT', 0],
  ])(
    'a 503/500/429 storm with Retry-After as %s is ridden out, waiting as asked',
    async (_, ra, wait) => {
      const clock = compressedClock();
      const client = createClient({ baseURL: server.url, clock, retry: { attempts: 4 } });
      const key = `k${Math.random()}`;
      const header = ra.startsWith('DATE+')
        ? new Date(Date.now() + Number(ra.slice(5)) * 1000).toUTCString()
        : ra;
      const r = await client.get(`/storm?key=${key}&fail=3&ra=${encodeURIComponent(header)}`);
      expect(r.data).toMatchObject({ after: 4 });
      expect(clock.delays).toHaveLength(3);
      for (const d of clock.delays) {
        // an HTTP date has one-second resolution, and each retry is a little closer to it
        expect(d).toBeGreaterThanOrEqual(ra.startsWith('DATE') ? wait - 1500 : wait);
        expect(d).toBeLessThanOrEqual(wait);
      }
    },
  );

  test('an unparsable Retry-After falls back to backoff; one too long fails at once', async () => {
    const clock = compressedClock();
    const client = createClient({
      baseURL: server.url,
      clock,
      retry: { jitter: false, baseDelay: 10 },
    });
    await client.get(`/storm?key=u${Math.random()}&fail=2&ra=soon`);
    expect(clock.delays).toEqual([10, 20]);
    const before = hits('/status');
    const err = (await failure(client.get('/status?status=503&ra=86400'))) as HttpError;
    expect(err).toBeInstanceOf(HttpError);
    expect(err.retryAfter).toBe(86_400_000);
    expect(hits('/status') - before).toBe(1);
  });

  test('a POST is retried after 429 and 503 + Retry-After, not after a bare 503', async () => {
    const client = createClient({ baseURL: server.url, clock: compressedClock() });
    const key = Math.random();
    await expect(client.post(`/storm?key=a${key}&fail=2&status=429`, 1)).resolves.toBeDefined();
    await expect(
      client.post(`/storm?key=b${key}&fail=2&status=503&ra=0`, 1),
    ).resolves.toBeDefined();
    const before = hits('/status');
    await failure(client.post('/status?status=503', 1));
    expect(hits('/status') - before).toBe(1);
  });

  test('a redirect loop: NetworkError ERR_TOO_MANY_REDIRECTS, not retried', async () => {
    const client = createClient({ baseURL: server.url });
    const before = hits('/redirect-loop');
    const err = (await failure(client.get('/redirect-loop'))) as NetworkError;
    expect(err).toMatchObject({ name: 'NetworkError', code: 'ERR_TOO_MANY_REDIRECTS' });
    // fetch follows 20 redirects: 21 requests, once
    expect(hits('/redirect-loop') - before).toBe(21);
  });

  test('a refused connection: NetworkError ECONNREFUSED; even a POST is retried (nothing was sent)', async () => {
    const client = createClient({ baseURL: await refusedURL(), clock: compressedClock() });
    const err = (await failure(client.post('/x', 1))) as NetworkError;
    expect(err).toMatchObject({ name: 'NetworkError', code: 'ECONNREFUSED', method: 'POST' });
    expect(client.intelligence().endpoint('POST', '/x')?.retriesPerformed).toBe(2);
  });

  test('a binary body comes back byte for byte', async () => {
    const client = createClient({ baseURL: server.url });
    const { data } = await client.get<ArrayBuffer>('/binary?n=64');
    const bytes = new Uint8Array(data);
    expect(bytes).toHaveLength(256 * 64);
    expect(bytes.subarray(256 * 63)).toEqual(BYTES);
  });

  test('a huge body: read whole without a limit; cut off at maxResponseBytes', async () => {
    const client = createClient({ baseURL: server.url, cache: false });
    const { data } = await client.get<ArrayBuffer>('/huge?mb=8');
    expect(data.byteLength).toBe(8 * 1024 * 1024);
    const aborted = server.aborted;
    const err = (await failure(
      client.get('/huge?mb=64', { maxResponseBytes: 1024 * 1024 }),
    )) as ResponseTooLargeError;
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    await expect.poll(() => server.aborted - aborted, { timeout: 5000 }).toBe(1);
  });
});
