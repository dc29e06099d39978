import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createClient, HttpError, ResponseTooLargeError } from '../src/index';
import { expectRefusedOption, makeClient, settle, startServer, type TestServer } from './helpers';

const BYTES = Uint8Array.from({ length: 256 }, (_, i) => i);
const MB = 1024 * 1024;

let server: TestServer;
let hugeSent = 0;

beforeAll(async () => {
  server = await startServer({
    '/octet': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(Buffer.from(BYTES));
    },
    '/png': (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(Buffer.from(BYTES));
    },
    '/bin-error': (_req, res) => {
      res.writeHead(500, { 'content-type': 'application/octet-stream' });
      res.end(Buffer.from(BYTES));
    },
    '/json': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"a":1}');
    },
    '/declared-huge': (_req, res) => {
      // Declares 50 MB, sends 1 MB and waits: the client must not wait for the rest.
      res.writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-length': String(50 * MB),
      });
      res.write(Buffer.alloc(MB));
    },
    '/chunked-huge': (_req, res) => {
      // No Content-Length: 64 KiB chunks for as long as the client reads (up to 50 MB).
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 1);
      let sent = 0;
      const pump = () => {
        while (sent < 50 * MB) {
          sent += chunk.length;
          hugeSent = sent;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      res.on('close', () => res.removeAllListeners('drain'));
      pump();
    },
  });
});
afterAll(() => server.close());

describe('response bodies', () => {
  test('application/octet-stream comes back as its exact bytes (an ArrayBuffer), never text', async () => {
    const client = createClient({ baseURL: server.url });
    const { data } = await client.get<ArrayBuffer>('/octet');
    expect(data).toBeInstanceOf(ArrayBuffer);
    expect(new Uint8Array(data)).toEqual(BYTES);
    const png = await client.get<ArrayBuffer>('/png');
    expect(new Uint8Array(png.data)).toEqual(BYTES);
  });

  test('a binary error body is kept as bytes on the HttpError', async () => {
    const client = createClient({ baseURL: server.url, retry: false });
    const err = (await client.get('/bin-error').catch((e: unknown) => e)) as HttpError;
    expect(err).toBeInstanceOf(HttpError);
    expect(new Uint8Array(err.data as ArrayBuffer)).toEqual(BYTES);
  });

  test.each([
    ['text', (d: unknown) => expect(d).toBe('{"a":1}')],
    ['json', (d: unknown) => expect(d).toEqual({ a: 1 })],
    [
      'arrayBuffer',
      (d: unknown) => expect(new TextDecoder().decode(d as ArrayBuffer)).toBe('{"a":1}'),
    ],
    [
      'blob',
      async (d: unknown) => {
        expect(d).toBeInstanceOf(Blob);
        expect((d as Blob).type).toBe('application/json');
        expect(await (d as Blob).text()).toBe('{"a":1}');
      },
    ],
    [
      'stream',
      async (d: unknown) => {
        expect(d).toBeInstanceOf(ReadableStream);
        expect(await new Response(d as ReadableStream).text()).toBe('{"a":1}');
      },
    ],
  ] as const)('responseType %s', async (responseType, check) => {
    const client = createClient({ baseURL: server.url });
    const { data } = await client.get('/json', { responseType });
    await check(data);
  });

  test('a stream is read once: never cached, never shared by dedup', async () => {
    const t = makeClient({}, { handler: () => Response.json(1) });
    const a = t.client.get('/s', { responseType: 'stream' });
    const b = t.client.get('/s', { responseType: 'stream' });
    await Promise.all([a, b]);
    await t.client.get('/s', { responseType: 'stream' });
    expect(t.fake.calls).toHaveLength(3);
    expect(t.of('dedup')).toHaveLength(0);
    expect(t.of('cache-write')).toHaveLength(0);
  });

  test('the same URL read as text and as JSON are different cache entries', async () => {
    const t = makeClient({}, { handler: () => Response.json({ a: 1 }) });
    expect((await t.client.get('/k')).data).toEqual({ a: 1 });
    expect((await t.client.get('/k', { responseType: 'text' })).data).toBe('{"a":1}');
    expect((await t.client.get('/k')).data).toEqual({ a: 1 });
    expect(t.fake.calls).toHaveLength(2);
  });

  test('maxResponseBytes: a declared Content-Length over the limit fails at once, not retried', async () => {
    const client = createClient({ baseURL: server.url, maxResponseBytes: 10 * MB });
    const aborted = server.aborted;
    const err = (await client
      .get('/declared-huge')
      .catch((e: unknown) => e)) as ResponseTooLargeError;
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect(err).toMatchObject({ limit: 10 * MB, received: 50 * MB, status: 200, method: 'GET' });
    await server.waitForAborted(aborted + 1);
    expect(server.requests.filter((r) => r.url === '/declared-huge')).toHaveLength(1);
  });

  test('maxResponseBytes: a chunked body fails as soon as it passes the limit; the download stops', async () => {
    const client = createClient({ baseURL: server.url });
    const aborted = server.aborted;
    const outcome = await settle(client.get('/chunked-huge', { maxResponseBytes: MB }));
    const err = (outcome as { reason: ResponseTooLargeError }).reason;
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect(err.received).toBeGreaterThan(MB);
    expect(err.received).toBeLessThanOrEqual(MB + 64 * 1024);
    await server.waitForAborted(aborted + 1);
    // The server was stopped long before its 50 MB (socket buffers hold a few MB at most).
    expect(hugeSent).toBeLessThan(20 * MB);
  });

  test('maxResponseBytes with a stream errors the stream past the limit; the download stops', async () => {
    const client = createClient({ baseURL: server.url });
    const aborted = server.aborted;
    const { data } = await client.get<ReadableStream>('/chunked-huge', {
      responseType: 'stream',
      maxResponseBytes: MB,
    });
    const err = await new Response(data).arrayBuffer().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect((err as ResponseTooLargeError).received).toBeLessThanOrEqual(MB + 64 * 1024);
    await server.waitForAborted(aborted + 1);
    expect(hugeSent).toBeLessThan(20 * MB);
  });

  test('a body within the limit is read whole, as every type', async () => {
    const client = createClient({ baseURL: server.url, maxResponseBytes: 256 });
    expect(new Uint8Array((await client.get<ArrayBuffer>('/octet')).data)).toEqual(BYTES);
    expect((await client.get('/json')).data).toEqual({ a: 1 });
    expect((await client.get('/json', { responseType: 'text', maxResponseBytes: 7 })).data).toBe(
      '{"a":1}',
    );
    const blob = (await client.get<Blob>('/octet', { responseType: 'blob', cache: false })).data;
    expect(blob.size).toBe(256);
  });

  test.each([
    [{ responseType: 'xml' as never }, RangeError, /`responseType` must be one of/],
    [{ responseType: 1 as never }, TypeError, /responseType/],
    [{ maxResponseBytes: -1 }, RangeError, /maxResponseBytes/],
    [{ maxResponseBytes: 1.5 }, RangeError, /maxResponseBytes/],
    [{ maxResponseBytes: '1' as never }, TypeError, /maxResponseBytes/],
  ])('bad body option %j', (options, type, message) => expectRefusedOption(options, type, message));
});
