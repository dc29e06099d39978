import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CancelledError, createClient, HttpError, TimeoutError } from '../src/index';
import { compressedClock, startServer, type TestServer } from './helpers';

let server: TestServer;
const hits = new Map<string, number>();
const count = (path: string) => {
  const n = (hits.get(path) ?? 0) + 1;
  hits.set(path, n);
  return n;
};

beforeAll(async () => {
  server = await startServer({
    '/json': (_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ ok: true }));
    },
    '/flaky-seconds': (_req, res) => {
      if (count('/flaky-seconds') === 1) {
        res.writeHead(503, { 'retry-after': '2' });
        res.end('busy');
        return;
      }
      res.end('recovered');
    },
    '/flaky-date': (_req, res) => {
      if (count('/flaky-date') === 1) {
        res.writeHead(429, { 'retry-after': new Date(Date.now() + 3000).toUTCString() });
        res.end();
        return;
      }
      res.end('recovered');
    },
    '/problem': (_req, res) => {
      res.writeHead(422, 'Unprocessable Entity', { 'content-type': 'application/problem+json' });
      res.end(JSON.stringify({ title: 'bad' }));
    },
    '/slow': () => {
      // never answers: only an abort ends it
    },
    '/slow-body': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"partial":');
    },
    '/counted': (_req, res) => {
      count('/counted');
      setTimeout(() => res.end('once'), 20);
    },
  });
});

afterAll(() => server.close());

describe('against a real loopback server', () => {
  test('sequential requests reuse keep-alive connections', async () => {
    const client = createClient({ baseURL: server.url });
    const before = server.connections;
    for (let i = 0; i < 10; i++) {
      const r = await client.get('/json', { cache: false });
      expect(r.data).toEqual({ ok: true });
    }
    // undici may open a second socket while the first is returned to its pool (raw fetch does
    // the same); without keep-alive this would be 10.
    expect(server.connections - before).toBeLessThanOrEqual(2);
    const warm = server.connections;
    for (let i = 0; i < 10; i++) await client.get('/json', { cache: false });
    expect(server.connections).toBe(warm);
  });

  test('concurrent identical GETs reach the server once', async () => {
    const client = createClient({ baseURL: server.url });
    const all = await Promise.all(Array.from({ length: 20 }, () => client.get('/counted')));
    expect(hits.get('/counted')).toBe(1);
    expect(new Set(all).size).toBe(1);
  });

  test('Retry-After in seconds is honoured', async () => {
    const clock = compressedClock();
    const client = createClient({ baseURL: server.url, clock });
    const r = await client.get('/flaky-seconds');
    expect(r.data).toBe('recovered');
    expect(clock.delays).toEqual([2000]);
  });

  test('Retry-After as an HTTP date is honoured', async () => {
    const clock = compressedClock();
    const client = createClient({ baseURL: server.url, clock });
    const r = await client.get('/flaky-date');
    expect(r.data).toBe('recovered');
    expect(clock.delays).toHaveLength(1);
    // HTTP dates have one-second resolution.
    expect(clock.delays[0]).toBeGreaterThan(1000);
    expect(clock.delays[0]).toBeLessThanOrEqual(3000);
  });

  test('an HttpError carries the parsed problem+json body', async () => {
    const client = createClient({ baseURL: server.url });
    const err = (await client.get('/problem').catch((e: unknown) => e)) as HttpError;
    expect(err).toBeInstanceOf(HttpError);
    expect(err).toMatchObject({
      status: 422,
      statusText: 'Unprocessable Entity',
      data: { title: 'bad' },
    });
  });

  test('a timeout aborts the real socket', async () => {
    const client = createClient({ baseURL: server.url, timeout: 50, retry: { attempts: 1 } });
    const aborted = server.aborted;
    await expect(client.get('/slow')).rejects.toBeInstanceOf(TimeoutError);
    await server.waitForAborted(aborted + 1);
  });

  test('a timeout while the body streams aborts the real socket', async () => {
    const client = createClient({ baseURL: server.url, timeout: 50, retry: { attempts: 1 } });
    const aborted = server.aborted;
    await expect(client.get('/slow-body')).rejects.toBeInstanceOf(TimeoutError);
    await server.waitForAborted(aborted + 1);
  });

  test('cancel() aborts the real socket', async () => {
    const client = createClient({ baseURL: server.url });
    const aborted = server.aborted;
    const before = server.requests.length;
    const p = client.get('/slow');
    while (server.requests.length === before) await new Promise((r) => setTimeout(r, 5));
    p.cancel();
    await expect(p).rejects.toBeInstanceOf(CancelledError);
    await server.waitForAborted(aborted + 1);
  });

  test('an external signal aborts the real socket', async () => {
    const client = createClient({ baseURL: server.url });
    const aborted = server.aborted;
    const controller = new AbortController();
    const before = server.requests.length;
    const p = client.get('/slow', { signal: controller.signal });
    while (server.requests.length === before) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    await expect(p).rejects.toBeInstanceOf(CancelledError);
    await server.waitForAborted(aborted + 1);
  });
});
