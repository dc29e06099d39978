/**
 * Chaos audit of the request pipeline (third round): odd header names, clocks that jump, bodies
 * that fail mid-read, fetch implementations that misbehave, flights racing the cache.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createClient, HttpError } from '../src/index';
import { createFakeFetch, FakeClock, settle, startServer, type TestServer } from './helpers';

let api: TestServer;
/** The `__proto__` request header of each request /h received, as sent (rawHeaders). */
const protoHeaders: (string | undefined)[] = [];
beforeAll(async () => {
  api = await startServer({
    '/h': (req, res) => {
      const raw = req.rawHeaders;
      const i = raw.findIndex((name, n) => n % 2 === 0 && name.toLowerCase() === '__proto__');
      protoHeaders.push(i === -1 ? undefined : raw[i + 1]);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ proto: i === -1 ? null : raw[i + 1] }));
    },
  });
});
afterAll(() => api.close());

describe('a header named __proto__', () => {
  // JSON.parse (a config file, a header map from a proxy) makes `__proto__` an own key. Node's
  // fetch drops such a header from a headers object, and an object key of that name is no data:
  // it would be neither keyed nor sent, two different requests merged into one key.
  const named = (value: string) => JSON.parse(`{"__proto__":${JSON.stringify(value)}}`);

  test('on a request: the RangeError naming it, nothing sent', async () => {
    const client = createClient({ baseURL: api.url });
    protoHeaders.length = 0;
    for (const name of ['__proto__', '__PROTO__']) {
      const headers = JSON.parse(`{${JSON.stringify(name)}:"a"}`);
      expect(() => client.resolve('GET', '/h', { headers })).toThrow(RangeError);
      await expect(client.get('/h', { headers })).rejects.toThrow(
        `keel: \`headers[${JSON.stringify(name)}]\` must be`,
      );
    }
    expect(protoHeaders).toEqual([]);
    expect(api.requests.filter((r) => r.url === '/h')).toEqual([]);
  });

  test('on the client: the RangeError naming it, at createClient', () => {
    expect(() => createClient({ baseURL: api.url, headers: named('c') })).toThrow(RangeError);
    expect(() => createClient({ baseURL: api.url, headers: named('c') })).toThrow(
      'keel: `headers["__proto__"]` must be',
    );
  });
});

describe('a Retry-After that is no HTTP date, though Date.parse reads one', () => {
  // `soon 5` reads as 2001-05-01 (in the past: a wait of 0), `x 2030` as 2030-01-01.
  test('a GET backs off as for any unparsable value, rather than retrying at once', async () => {
    for (const value of ['soon 5', 'x 2030']) {
      const clock = new FakeClock();
      const fake = createFakeFetch({
        handler: () => new Response('busy', { status: 503, headers: { 'retry-after': value } }),
      });
      const client = createClient({
        baseURL: 'https://api.test',
        fetch: fake.fetch,
        clock,
        retry: { jitter: false, baseDelay: 100 },
      });
      const outcome = settle(client.get('/x'));
      await clock.runAll();
      expect((await outcome).state).toBe('rejected');
      expect(fake.calls).toHaveLength(3);
      expect(clock.history.map((t) => t.ms)).toEqual([100, 200]);
    }
  });

  test('a POST answered 503 with it is sent once: the server did not say it left it unprocessed', async () => {
    const clock = new FakeClock();
    const fake = createFakeFetch({
      handler: () => new Response('busy', { status: 503, headers: { 'retry-after': 'soon 5' } }),
    });
    const client = createClient({ baseURL: 'https://api.test', fetch: fake.fetch, clock });
    const outcome = await settle(client.post('/x', { a: 1 }));
    await clock.runAll();
    expect(outcome.state === 'rejected' && outcome.reason).toBeInstanceOf(HttpError);
    expect(fake.calls).toHaveLength(1);
  });
});
