// Black-box acceptance tests over a real loopback node:http server with the default fetch
// (spec: ClientOptions.fetch defaults to the global fetch; baseURL, headers, params, body,
// ApiResponse, HttpError, cancellation aborting the fetch promptly).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CancelledError, createClient, HttpError, TimeoutError } from '../../src/index';
import { ManualClock, settle } from './harness';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

let server: Server;
let base: string;
const seen: Seen[] = [];
let aborted = 0;
let hits503 = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const path = (req.url ?? '').split('?')[0];
      if (path === '/json') {
        res.writeHead(200, { 'content-type': 'application/json', 'x-server': 'keel' });
        res.end(req.method === 'HEAD' ? undefined : JSON.stringify({ method: req.method, body }));
      } else if (path === '/text') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('hello');
      } else if (path === '/empty') {
        res.writeHead(204);
        res.end();
      } else if (path === '/missing') {
        res.writeHead(404, 'Not Found', { 'content-type': 'application/json' });
        res.end('{"error":"nope"}');
      } else if (path === '/flaky') {
        hits503++;
        if (hits503 % 2 === 1) {
          res.writeHead(503, { 'retry-after': '2' });
          res.end();
        } else {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"recovered":true}');
        }
      } else if (path === '/hang') {
        res.on('close', () => {
          aborted++;
        });
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

async function until(cond: () => boolean) {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 2));
  expect(cond()).toBe(true);
}

describe('Loopback (default global fetch)', () => {
  test('GET with baseURL, merged headers and params; JSON parsed; ApiResponse fields', async () => {
    const client = createClient({
      baseURL: base,
      headers: { 'x-client': 'c', 'x-both': 'client' },
    });
    const r = await client.get<{ method: string }>('/json', {
      headers: { 'x-both': 'request' },
      params: { tag: ['a', 'b'], n: 1 },
    });
    expect(r.data.method).toBe('GET');
    expect(r.status).toBe(200);
    expect(r.statusText).toBe('OK');
    expect(r.headers.get('x-server')).toBe('keel');
    const s = seen.at(-1)!;
    expect(s.headers['x-client']).toBe('c');
    expect(s.headers['x-both']).toBe('request');
    const q = new URLSearchParams(s.url.split('?')[1]);
    expect(q.getAll('tag')).toEqual(['a', 'b']);
    expect(q.get('n')).toBe('1');
  });

  test('Authentication: a request header wins over the client one of the same name in another case; one value reaches the server', async () => {
    const client = createClient({
      baseURL: base,
      headers: { Authorization: 'Bearer client', 'X-Api-Key': 'k' },
    });
    await client.get('/json', { cache: false });
    await client.get('/json', { cache: false, headers: { authorization: 'Bearer request' } });
    await client.get('/json', {
      cache: false,
      headers: new Headers({ AUTHORIZATION: 'Bearer headers' }),
    });
    const [a, b, c] = seen.slice(-3);
    expect(a!.headers.authorization).toBe('Bearer client');
    expect(b!.headers.authorization).toBe('Bearer request');
    expect(c!.headers.authorization).toBe('Bearer headers');
    for (const s of [a, b, c]) expect(s!.headers['x-api-key']).toBe('k');
  });

  test('POST JSON-stringifies an object body; text, 204 and HEAD responses', async () => {
    const client = createClient({ baseURL: base });
    const r = await client.post<{ body: string }>('/json', { a: 1 });
    expect(JSON.parse(r.data.body)).toEqual({ a: 1 });
    expect(seen.at(-1)!.headers['content-type']).toContain('application/json');
    expect((await client.get('/text')).data).toBe('hello');
    const empty = await client.delete('/empty');
    expect(empty.status).toBe(204);
    const head = await client.head('/json');
    expect(head.status).toBe(200);
    expect(head.headers.get('x-server')).toBe('keel');
  });

  test('a 404 rejects with HttpError {status, statusText, headers}', async () => {
    const client = createClient({ baseURL: base });
    const o = await settle(client.get('/missing'));
    expect(o.ok).toBe(false);
    if (!o.ok) {
      expect(o.error).toBeInstanceOf(HttpError);
      expect(o.error).toMatchObject({ status: 404, statusText: 'Not Found' });
      expect((o.error as HttpError).headers?.get('content-type')).toBe('application/json');
    }
  });

  test('503 with Retry-After is retried after the server-given wait (injected clock)', async () => {
    const clock = new ManualClock();
    const client = createClient({ baseURL: base, clock, retry: { baseDelay: 10, jitter: false } });
    const before = seen.length;
    const p = client.get('/flaky');
    await until(() => seen.length === before + 1 && clock.pending === 1);
    await clock.advance(1999);
    expect(seen.length).toBe(before + 1);
    await clock.advance(1);
    expect((await p).data).toEqual({ recovered: true });
    expect(seen.length).toBe(before + 2);
  });

  test('cancel() and a timeout abort the fetch promptly: the server sees the connection close', async () => {
    const clock = new ManualClock();
    const client = createClient({ baseURL: base, clock, retry: false });
    const before = seen.length;
    const a0 = aborted;
    const p = client.get('/hang');
    await until(() => seen.length === before + 1);
    p.cancel();
    const o = await settle(p);
    expect(!o.ok && o.error instanceof CancelledError).toBe(true);
    await until(() => aborted === a0 + 1);
    const t = settle(client.get('/hang', { timeout: 50 }));
    await until(() => seen.length === before + 2);
    await clock.advance(50);
    const ot = await t;
    expect(!ot.ok && ot.error instanceof TimeoutError).toBe(true);
    await until(() => aborted === a0 + 2);
  });
});
