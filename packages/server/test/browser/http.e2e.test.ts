import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { launchChromium } from '../../../../scripts/chromium.mjs';
import { type App, createApp } from '../../src/index';

// What a browser does with the server's answers, in Debian's Chromium: it decodes the bodies
// the server compressed, keeps and sends back the cookies it set (and hides an HttpOnly one
// from the page), revalidates a file by its ETag from its own HTTP cache, and reads a range.

let app: App;
let base: string;
let browser: { context: BrowserContext; close(): Promise<void> };
let page: Page;
let dir: string;
/** The If-None-Match of each request for the file, in order. */
const fileConditions: (string | undefined)[] = [];
const fileStatuses: number[] = [];

const ITEMS = Array.from({ length: 400 }, (_, i) => ({ id: i, title: `todo number ${i}` }));
const FILE = 'keel serves files with ranges and ETags.\n'.repeat(50);
// A value a cookie cannot hold as it is: a space, `;`, `=`, a comma and a non-ASCII character.
const SESSION = 'a b;c=d, é€';

/** Runs `fn` in the page (sent as source: it may use nothing from this file's scope). */
function inPage<T>(fn: () => Promise<T>): Promise<T> {
  return page.evaluate(fn);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keel-server-browser-'));
  writeFileSync(join(dir, 'notes.txt'), FILE);
  app = createApp({ compression: true });
  app.get('/', (ctx) => ctx.send('<!doctype html><title>keel http</title><p>http</p>'));
  app.get('/todos', (ctx) => ctx.json(ITEMS));
  app.get('/login', (ctx) => {
    ctx.setCookie('session', SESSION, { httpOnly: true, maxAge: 3600 });
    ctx.setCookie('theme', 'dark', { maxAge: 3600 });
    return ctx.json({ ok: true });
  });
  app.get('/me', (ctx) =>
    ctx.json({ session: ctx.cookie('session') ?? null, theme: ctx.cookie('theme') ?? null }),
  );
  app.get('/notes.txt', (ctx) => {
    fileConditions.push(ctx.header('if-none-match'));
    // The response, not ctx: a pooled ctx is not to be read once the request is over.
    const res = ctx.res;
    res.once('finish', () => fileStatuses.push(res.statusCode));
    return ctx.cacheControl({ maxAge: 0 }).sendFile('notes.txt', { root: dir });
  });
  const server = await app.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium(chromium);
  page = await browser.context.newPage();
  await page.goto(`${base}/`);
});

afterAll(async () => {
  await browser?.close();
  await app?.close({ timeoutMs: 1000 });
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the browser and the server', () => {
  test('a JSON body the server compressed (brotli or gzip, as Chromium offers them) arrives intact', async () => {
    const result = await inPage(async () => {
      const res = await fetch('/todos');
      return {
        encoding: res.headers.get('content-encoding'),
        vary: res.headers.get('vary'),
        body: await res.json(),
      };
    });
    // Brotli where the browser offers it (Chromium does on http://127.0.0.1 today), else gzip.
    expect(result.encoding).toMatch(/^(br|gzip)$/);
    expect(result.vary).toMatch(/accept-encoding/i);
    expect(result.body).toEqual(ITEMS);
  });

  test('cookies: the browser keeps what setCookie wrote and sends it back; HttpOnly stays hidden from the page', async () => {
    const result = await inPage(async () => {
      await fetch('/login');
      const me = await (await fetch('/me')).json();
      return { me, visible: document.cookie };
    });
    expect(result.me).toEqual({ session: SESSION, theme: 'dark' });
    expect(result.visible).toBe('theme=dark');
  });

  test('a file is revalidated from the browser cache by its ETag (304), and a range is 206', async () => {
    const result = await inPage(async () => {
      const first = await fetch('/notes.txt');
      const again = await fetch('/notes.txt', { cache: 'no-cache' });
      const range = await fetch('/notes.txt', {
        headers: { range: 'bytes=5-10' },
        cache: 'no-store',
      });
      return {
        first: [first.status, first.headers.get('etag'), (await first.text()).length],
        again: [again.status, await again.text()],
        range: [range.status, range.headers.get('content-range'), await range.text()],
      };
    });
    const [status, etag, length] = result.first;
    expect(status).toBe(200);
    expect(etag).toMatch(/^(W\/)?".+"$/);
    expect(length).toBe(FILE.length);
    // The page saw the cached body with 200; the server was asked with the ETag and said 304.
    expect(result.again).toEqual([200, FILE]);
    expect(fileConditions.slice(0, 2)).toEqual([undefined, etag]);
    expect(fileStatuses.slice(0, 2)).toEqual([200, 304]);
    expect(result.range).toEqual([206, `bytes 5-10/${FILE.length}`, FILE.slice(5, 11)]);
  });
});
