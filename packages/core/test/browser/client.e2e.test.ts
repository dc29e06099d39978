import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { launchChromium } from '../../../../scripts/chromium.mjs';
import { until } from '../../../../scripts/until.mjs';

// @keel/core in a real browser (Debian's Chromium, driven by playwright-core): the core is
// bundled for the browser from its sources, loaded by a page served from 127.0.0.1, and used as
// an app would use it. What jsdom cannot show: the browser's own fetch, its streams and its
// Uint8Array realm, a relative baseURL resolved against the page, and cancellation reaching the
// server as a closed connection.

const MB = 1024 * 1024;
const BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

let server: Server;
let base: string;
let browser: { context: BrowserContext; close(): Promise<void> };
let context: BrowserContext;
let page: Page;
let bundle: string;

/** Requests the server saw, by path; connections a client closed before the answer ended. */
const seen = new Map<string, number>();
const closedEarly = new Map<string, number>();
/** Bytes the endless body had sent when its client went away. */
let endlessSent = 0;

const bump = (map: Map<string, number>, path: string) => map.set(path, (map.get(path) ?? 0) + 1);

function route(req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?')[0]!;
  bump(seen, path);
  res.on('close', () => {
    if (!res.writableFinished) bump(closedEarly, path);
  });
  switch (path) {
    case '/':
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        '<!doctype html><title>keel core</title><p>core in Chromium</p>' +
          '<script type="module">import * as keel from "/keel.js"; window.keel = keel;</script>',
      );
      return;
    case '/worker.js':
      // A module worker: no document, no window; a relative baseURL resolves against its location.
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
      res.end(
        [
          'import { createClient } from "/keel.js";',
          'const client = createClient({ baseURL: "/api" });',
          'client.get("/users").then(',
          '  (r) => postMessage({ data: r.data, status: r.status }),',
          '  (e) => postMessage({ error: e.name + ": " + e.message }),',
          ');',
        ].join('\n'),
      );
      return;
    case '/keel.js':
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
      res.end(bundle);
      return;
    case '/api/users':
      // Answered a little later, so that two callers in one tick find each other in flight.
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify([{ id: 1, name: 'Ada' }]));
      }, 30);
      return;
    case '/api/text':
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('prix: 12 €, 𝄞');
      return;
    case '/api/octet':
    case '/api/png':
      // The same 256 bytes as an unknown binary and as an image.
      res.writeHead(200, {
        'content-type': path === '/api/png' ? 'image/png' : 'application/octet-stream',
      });
      res.end(BYTES);
      return;
    case '/api/endless': {
      // 64 KiB chunks for as long as the client reads (at most 50 MB).
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 1);
      endlessSent = 0;
      const pump = () => {
        while (endlessSent < 50 * MB && !res.destroyed) {
          endlessSent += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      pump();
      return;
    }
    case '/api/hang':
      // Never answers: only the client ends this request.
      return;
    case '/api/flaky':
      if ((seen.get(path) ?? 0) % 2 === 1) {
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '0' });
        res.end('{"error":"busy"}');
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      }
      return;
    default:
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":"not found"}');
  }
}

/** A loopback port nothing listens on (one the kernel gave, then closed). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

beforeAll(async () => {
  const built = await build({
    entryPoints: [fileURLToPath(new URL('../../src/index.ts', import.meta.url))],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  bundle = built.outputFiles[0]!.text;
  server = createServer(route);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium(chromium);
  context = browser.context;
  page = await context.newPage();
  await page.goto(`${base}/`);
  await page.waitForFunction(() => 'keel' in window);
});

afterAll(async () => {
  await browser?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

/**
 * Runs `fn` in the page with the core's module (which the page put on `window.keel`) as its
 * first argument. `fn` is sent as source: it may use nothing from this file's scope.
 */
function inPage<T, A = undefined>(
  fn: (keel: typeof import('../../src/index'), arg: A) => Promise<T>,
  arg?: A,
): Promise<T> {
  return page.evaluate(
    ([source, a]) => {
      // The test's own function, rebuilt from its source in its own page.
      const run = new Function(`return (${source});`)();
      return run((window as unknown as { keel: unknown }).keel, a);
    },
    [fn.toString(), arg] as const,
  ) as Promise<T>;
}

describe('@keel/core in Chromium', () => {
  test('a relative baseURL is resolved against the page; identical GETs in one tick make one request', async () => {
    const before = seen.get('/api/users') ?? 0;
    const result = await inPage(async (keel) => {
      const client = keel.createClient({ baseURL: '/api' });
      const [a, b] = await Promise.all([client.get('/users'), client.get('/users')]);
      const again = await client.get('/users');
      return {
        data: a.data,
        same: a.data === b.data,
        status: a.status,
        type: a.headers.get('content-type'),
        cached: again.data === a.data,
      };
    });
    expect(result).toEqual({
      data: [{ id: 1, name: 'Ada' }],
      same: true,
      status: 200,
      type: 'application/json',
      cached: true,
    });
    expect((seen.get('/api/users') ?? 0) - before).toBe(1);
  });

  test('bodies by type: text decoded, binary as its exact bytes, a Blob with its type', async () => {
    const result = await inPage(async (keel) => {
      const client = keel.createClient({ baseURL: '/api', maxResponseBytes: 1024 });
      const text = (await client.get<string>('/text')).data;
      const octet = new Uint8Array((await client.get<ArrayBuffer>('/octet')).data);
      const blob = (await client.get<Blob>('/png', { responseType: 'blob' })).data;
      const counted = new Uint8Array(
        (await client.get<ArrayBuffer>('/png', { responseType: 'arrayBuffer', cache: false })).data,
      );
      return {
        text,
        octet: Array.from(octet),
        isArrayBuffer: octet.byteLength === 256,
        blobType: blob.type,
        blobSize: blob.size,
        counted: Array.from(counted),
      };
    });
    const bytes = Array.from(BYTES);
    expect(result).toEqual({
      text: 'prix: 12 €, 𝄞',
      octet: bytes,
      isArrayBuffer: true,
      blobType: 'image/png',
      blobSize: 256,
      counted: bytes,
    });
  });

  test('maxResponseBytes: a body past the limit fails at once, and the download stops', async () => {
    const closed = closedEarly.get('/api/endless') ?? 0;
    const result = await inPage(async (keel) => {
      const client = keel.createClient({ baseURL: '/api' });
      const error = await client.get('/endless', { maxResponseBytes: 1024 * 1024 }).then(
        () => undefined,
        (e: Error & { limit?: number; received?: number }) => e,
      );
      return {
        name: error?.name,
        isKeel: keel.isResponseTooLargeError(error),
        limit: error?.limit,
        received: error?.received,
      };
    });
    expect(result.name).toBe('ResponseTooLargeError');
    expect(result.isKeel).toBe(true);
    expect(result.limit).toBe(MB);
    expect(result.received).toBeGreaterThan(MB);
    await until(() => (closedEarly.get('/api/endless') ?? 0) > closed, 'the download to stop');
    expect(endlessSent).toBeLessThan(45 * MB);
  });

  test('a counted stream is read as the page reads it, errors past the limit, and stops the download', async () => {
    const closed = closedEarly.get('/api/endless') ?? 0;
    const result = await inPage(async (keel) => {
      const client = keel.createClient({ baseURL: '/api' });
      const { data } = await client.get<ReadableStream<Uint8Array>>('/endless', {
        responseType: 'stream',
        maxResponseBytes: 1024 * 1024,
      });
      const reader = data.getReader();
      let read = 0;
      for (;;) {
        try {
          const { done, value } = await reader.read();
          if (done) return { read, error: 'ended' };
          // Chunks are the page's own bytes.
          if (!(value instanceof Uint8Array)) return { read, error: 'not bytes' };
          read += value.byteLength;
        } catch (e) {
          return { read, error: (e as Error).name };
        }
      }
    });
    expect(result.error).toBe('ResponseTooLargeError');
    expect(result.read).toBeLessThanOrEqual(MB);
    await until(() => (closedEarly.get('/api/endless') ?? 0) > closed, 'the download to stop');
  });

  test('cancel(), a timeout and a caller signal each reject at once and close the connection', async () => {
    const closed = closedEarly.get('/api/hang') ?? 0;
    const result = await inPage(async (keel) => {
      const client = keel.createClient({ baseURL: '/api', retry: false });
      const cancelled = client.get('/hang?by=cancel');
      setTimeout(() => cancelled.cancel(), 20);
      const controller = new AbortController();
      const signalled = client.get('/hang?by=signal', { signal: controller.signal });
      setTimeout(() => controller.abort(), 20);
      const timedOut = client.get('/hang?by=timeout', { timeout: 50 });
      const names = await Promise.all(
        [cancelled, signalled, timedOut].map((p) =>
          p.then(
            () => 'resolved',
            (e: Error) => e.name,
          ),
        ),
      );
      return { names, inFlight: client.fetchingKeys().length };
    });
    expect(result.names).toEqual(['CancelledError', 'CancelledError', 'TimeoutError']);
    expect(result.inFlight).toBe(0);
    // Each fetch was aborted: the server saw its three connections close unanswered.
    await until(
      () => (closedEarly.get('/api/hang') ?? 0) >= closed + 3,
      'the requests to be aborted',
    );
  });

  test('a refused connection is a NetworkError naming the request; a 503 is retried to success', async () => {
    const result = await inPage(
      async (keel, port) => {
        const client = keel.createClient({ retry: { attempts: 2, baseDelay: 1 } });
        const error = await client.get(`http://127.0.0.1:${port}/nothing-listens`).then(
          () => undefined,
          (e: Error & { method?: string; url?: string }) => e,
        );
        const flaky = keel.createClient({
          baseURL: '/api',
          retry: { baseDelay: 1, jitter: false },
        });
        const first = await flaky.get<{ ok: boolean }>('/flaky');
        const second = await flaky.get<{ ok: boolean }>('/flaky', { cache: false });
        return {
          name: error?.name,
          isNetwork: keel.isNetworkError(error),
          method: error?.method,
          url: error?.url,
          first: first.data,
          second: second.data,
        };
      },
      await freePort(),
    );
    expect(result.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/nothing-listens$/);
    expect(result).toMatchObject({
      name: 'NetworkError',
      isNetwork: true,
      method: 'GET',
      first: { ok: true },
      second: { ok: true },
    });
  });

  test('in a module worker (no document): a relative baseURL resolves against the worker', async () => {
    const result = await page.evaluate(
      () =>
        new Promise((resolve, reject) => {
          const worker = new Worker('/worker.js', { type: 'module' });
          worker.onmessage = (e) => {
            resolve(e.data);
            worker.terminate();
          };
          worker.onerror = (e) => reject(new Error(e.message));
        }),
    );
    expect(result).toEqual({ data: [{ id: 1, name: 'Ada' }], status: 200 });
  });
});
