/**
 * Chaos audit of the request pipeline (third round): odd header names, clocks that jump, bodies
 * that fail mid-read, fetch implementations that misbehave, flights racing the cache.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createClient } from '../src/index';
import { startServer, type TestServer } from './helpers';

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
