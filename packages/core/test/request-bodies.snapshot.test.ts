/**
 * Request bodies are taken when the request is made, as fetch(url, init) takes them: keel calls
 * fetch later (after a microtask, a scheduler wait, a retry's backoff), and a form or buffer the
 * caller changes in the meantime must not change what is sent. Real loopback server.
 */
import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createClient } from '../src/index';
import { deferred, startServer, type TestServer } from './helpers';

let server: TestServer;
/** Every body the server received, in order, as text (forms) or bytes. */
let received: { type: string; bytes: Buffer }[] = [];
let failFirst = 0;
let release: () => void = () => {};
/** Resolved when a request reaches '/hold' (which then waits for release()). */
let held = deferred();

async function read(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

beforeAll(async () => {
  server = await startServer({
    '/hold': async (_req, res) => {
      await new Promise<void>((resolve) => {
        release = resolve;
        held.resolve();
      });
      res.writeHead(204).end();
    },
    '/echo': async (req, res) => {
      received.push({ type: req.headers['content-type'] ?? '', bytes: await read(req) });
      if (failFirst > 0) {
        failFirst--;
        res.writeHead(503).end();
        return;
      }
      res.writeHead(204).end();
    },
  });
});
afterAll(() => server.close());

function client() {
  received = [];
  failFirst = 0;
  return createClient({ baseURL: server.url, retry: { attempts: 2, baseDelay: 1, jitter: false } });
}

/** Each body kind whose object can change after the call, with how to change it. */
const MUTABLE = [
  ['URLSearchParams', () => new URLSearchParams('a=1'), (b: URLSearchParams) => b.set('a', '2')],
  ['FormData', () => formOf('1'), (b: FormData) => b.set('a', '2')],
  [
    'ArrayBuffer',
    () => new Uint8Array([1, 2, 3]).buffer,
    (b: ArrayBuffer) => void new Uint8Array(b).fill(9),
  ],
  ['Uint8Array', () => new Uint8Array([1, 2, 3]), (b: Uint8Array) => void b.fill(9)],
  ['Buffer', () => Buffer.from([1, 2, 3]), (b: Buffer) => void b.fill(9)],
  [
    'Uint16Array over part of a buffer',
    () => new Uint16Array(new Uint8Array([7, 7, 1, 2, 3, 4, 7, 7]).buffer, 2, 2),
    (b: Uint16Array) => void b.fill(0x909),
  ],
  [
    'DataView',
    () => new DataView(new Uint8Array([1, 2, 3]).buffer),
    (b: DataView) => b.setUint8(0, 9),
  ],
] as const;

function formOf(a: string): FormData {
  const form = new FormData();
  form.set('a', a);
  form.set('file', new File(['hello'], 'hello.txt', { type: 'text/plain' }));
  return form;
}

/** What the body sends when nothing changes it: a fresh copy, sent by fetch itself. */
async function expected(make: () => unknown): Promise<Buffer> {
  const { url } = server;
  const before = received.length;
  await fetch(`${url}/echo`, { method: 'PUT', body: make() as BodyInit });
  const got = received.splice(before)[0]!;
  // A multipart body differs by its boundary only: compare with it replaced.
  return unboundary(got);
}

function unboundary(r: { type: string; bytes: Buffer }): Buffer {
  const boundary = /boundary=(.+)$/.exec(r.type)?.[1];
  return boundary
    ? Buffer.from(r.bytes.toString('latin1').replaceAll(boundary, 'B'), 'latin1')
    : r.bytes;
}

describe('request bodies are taken at call time', () => {
  test.each(MUTABLE)(
    '%s changed right after the call (a guard: with no queue, fetch took it already): the original is sent',
    async (_n, make, change) => {
      const c = client();
      const want = await expected(make);
      const body = make();
      const done = c.put('/echo', body);
      (change as (b: unknown) => void)(body);
      await done;
      expect(received).toHaveLength(1);
      expect(unboundary(received[0]!)).toEqual(want);
    },
  );

  test.each(MUTABLE)(
    '%s changed while queued by the scheduler: the original is sent',
    async (_n, make, change) => {
      const want = await expected(make);
      const c = createClient({ baseURL: server.url, scheduler: { concurrency: 1 } });
      received = [];
      const first = c.get('/hold', { cache: false });
      const body = make();
      const done = c.put('/echo', body);
      // Let the first request reach the server: the second waits in the queue meanwhile.
      await held.promise;
      held = deferred();
      (change as (b: unknown) => void)(body);
      release();
      await Promise.all([first, done]);
      expect(received).toHaveLength(1);
      expect(unboundary(received[0]!)).toEqual(want);
    },
  );

  test.each(MUTABLE)(
    '%s changed between two attempts: the retry sends the same body',
    async (_n, make, change) => {
      const c = client();
      const want = await expected(make);
      failFirst = 1;
      const body = make();
      c.on('retry', () => (change as (b: unknown) => void)(body));
      await c.put('/echo', body);
      expect(received).toHaveLength(2);
      expect(unboundary(received[0]!)).toEqual(want);
      expect(unboundary(received[1]!)).toEqual(want);
    },
  );

  test('a form keeps the Content-Type fetch writes for it; a file part keeps its name and type', async () => {
    const c = client();
    await c.put('/echo', formOf('1'));
    await c.put('/echo', new URLSearchParams('a=1'));
    expect(received[0]!.type).toMatch(/^multipart\/form-data; boundary=/);
    expect(received[0]!.bytes.toString()).toContain('filename="hello.txt"');
    expect(received[0]!.bytes.toString()).toContain('Content-Type: text/plain');
    expect(received[1]!.type).toBe('application/x-www-form-urlencoded;charset=UTF-8');
  });
});
