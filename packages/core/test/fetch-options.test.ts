import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createClient, HttpError, NetworkError } from '../src/index';
import { expectRefusedOption, makeClient, startServer, type TestServer } from './helpers';

let server: TestServer;
beforeAll(async () => {
  server = await startServer({
    '/moved': (_req, res) => {
      res.writeHead(302, { location: '/target' });
      res.end();
    },
    '/target': (_req, res) => {
      res.end('arrived');
    },
    '/loop': (_req, res) => {
      res.writeHead(302, { location: '/loop' });
      res.end();
    },
  });
});
afterAll(() => server.close());

describe('fetch options pass through to fetch', () => {
  test('client options reach fetch, renamed where keel uses the name', async () => {
    const t = makeClient(
      {
        credentials: 'include',
        redirect: 'error',
        mode: 'cors',
        fetchCache: 'no-store',
        keepalive: true,
        fetchPriority: 'low',
        integrity: 'sha256-abc',
        referrerPolicy: 'no-referrer',
      },
      { handler: () => Response.json(1) },
    );
    await t.client.get('/a');
    expect(t.fake.last().init).toMatchObject({
      method: 'GET',
      credentials: 'include',
      redirect: 'error',
      mode: 'cors',
      cache: 'no-store',
      keepalive: true,
      priority: 'low',
      integrity: 'sha256-abc',
      referrerPolicy: 'no-referrer',
    });
  });

  test('request options win over the client ones, per field', async () => {
    const t = makeClient(
      { credentials: 'include', fetchCache: 'no-store' },
      { handler: () => Response.json(1) },
    );
    await t.client.post('/b', { x: 1 }, { credentials: 'omit', fetchPriority: 'high' });
    expect(t.fake.last().init).toMatchObject({
      method: 'POST',
      credentials: 'omit',
      cache: 'no-store',
      priority: 'high',
    });
  });

  test("keel's own cache and priority options never reach fetch", async () => {
    const t = makeClient({ scheduler: { priority: true } }, { handler: () => Response.json(1) });
    await t.client.get('/c', { cache: { ttl: 5 }, priority: 'high' });
    const init = t.fake.last().init;
    expect(init.cache).toBeUndefined();
    expect(init.priority).toBeUndefined();
    expect(Object.keys(init).sort()).toEqual(['body', 'headers', 'method', 'signal']);
  });

  test("redirect: 'manual' answers a 3xx as its HttpError, with the Location", async () => {
    const client = createClient({ baseURL: server.url, redirect: 'manual' });
    const err = (await client.get('/moved').catch((e: unknown) => e)) as HttpError;
    expect(err).toBeInstanceOf(HttpError);
    expect(err.status).toBe(302);
    expect(err.headers?.get('location')).toBe('/target');
    await expect(createClient({ baseURL: server.url }).get('/moved')).resolves.toMatchObject({
      data: 'arrived',
    });
  });

  test("redirect: 'error' makes a redirect a NetworkError, not retried", async () => {
    const client = createClient({ baseURL: server.url });
    const before = server.requests.length;
    const err = (await client
      .get('/moved', { redirect: 'error' })
      .catch((e: unknown) => e)) as NetworkError;
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.code).toBe('ERR_UNEXPECTED_REDIRECT');
    expect(server.requests.length - before).toBe(1);
  });

  test('an integrity mismatch is a NetworkError, not retried', async () => {
    const client = createClient({ baseURL: server.url });
    const before = server.requests.length;
    const err = (await client
      .get('/target', { integrity: 'sha256-AAAA' })
      .catch((e: unknown) => e)) as NetworkError;
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.code).toBe('ERR_INTEGRITY_MISMATCH');
    expect(server.requests.length - before).toBe(1);
  });

  // The endpoint answered (a 3xx, a body): the caller's redirect or integrity setting refused
  // it, so it says nothing about the endpoint's health, like a 4xx.
  test.each([
    [
      'a redirect under redirect: error',
      '/moved',
      { redirect: 'error' },
      'ERR_UNEXPECTED_REDIRECT',
    ],
    ['an integrity mismatch', '/target', { integrity: 'sha256-AAAA' }, 'ERR_INTEGRITY_MISMATCH'],
    ['a redirect loop', '/loop', {}, 'ERR_TOO_MANY_REDIRECTS'],
  ] as const)('%s does not count toward the circuit', async (_, path, options, code) => {
    const client = createClient({ baseURL: server.url, circuitBreaker: { failureThreshold: 1 } });
    const err = (await client.get(path, options).catch((e: unknown) => e)) as NetworkError;
    expect(err).toMatchObject({ name: 'NetworkError', code });
    expect(client.circuitBreaker().status('GET', path)).toMatchObject({
      state: 'closed',
      consecutiveFailures: 0,
    });
  });

  test.each([
    [{ mode: 'navigate' as never }, RangeError, /mode/],
    [{ credentials: 'all' as never }, RangeError, /`credentials` must be one of/],
    [{ redirect: 'loop' as never }, RangeError, /redirect/],
    [{ mode: 'open' as never }, RangeError, /mode/],
    [{ fetchCache: 'always' as never }, RangeError, /fetchCache/],
    [{ fetchPriority: 'urgent' as never }, RangeError, /fetchPriority/],
    [{ referrerPolicy: 'none' as never }, RangeError, /referrerPolicy/],
    [{ keepalive: 'yes' as never }, TypeError, /`keepalive` must be true or false/],
    [{ integrity: 5 as never }, TypeError, /`integrity` must be a string/],
  ])('bad fetch option %j', (options, type, message) =>
    expectRefusedOption(options, type, message),
  );
});
