import type { AddressInfo } from 'node:net';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { launchChromium } from '../../../../scripts/chromium.mjs';
import { type App, cors, createApp } from '../../src/index';

// cors() judged by the one judge that matters, a browser's CORS checks (Debian's Chromium): a
// page on one origin calls an API on another. What the middleware sends must let through what it
// allows (simple and preflighted requests, credentials, exposed headers, error statuses, a cached
// preflight) and nothing else (a refused origin, a header not exposed).

let page: Page;
let browser: { context: BrowserContext; close(): Promise<void> };
const apps: App[] = [];
let pageOrigin: string;
let api: string;
let strangerApi: string;
/** Methods the API saw, in order, with the path (`OPTIONS /items/1`: a preflight). */
const apiSaw: string[] = [];

async function serve(app: App): Promise<string> {
  apps.push(app);
  const server = await app.listen(0, '127.0.0.1');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  const site = createApp();
  site.get('/', (ctx) => ctx.send('<!doctype html><title>keel cors</title><p>the page</p>'));
  pageOrigin = await serve(site);

  // The API on another origin (another port), allowing the page's origin only.
  const apiApp = createApp();
  apiApp.use((ctx, next) => {
    apiSaw.push(`${ctx.method} ${ctx.path}`);
    return next();
  });
  apiApp.use(
    cors({ origin: [pageOrigin], credentials: true, exposedHeaders: ['x-total'], maxAge: 600 }),
  );
  apiApp.get('/items', (ctx) => {
    ctx.setHeader('x-total', '3');
    ctx.setHeader('x-internal', 'secret');
    return ctx.json([1, 2, 3]);
  });
  apiApp.put('/items/:id', (ctx) =>
    ctx.json({ id: ctx.params.id, token: ctx.header('x-token') ?? null, body: ctx.body }),
  );
  apiApp.get('/login', (ctx) => {
    ctx.setCookie('session', 's1', { httpOnly: true });
    return ctx.json({ ok: true });
  });
  apiApp.get('/whoami', (ctx) => ctx.json({ session: ctx.cookie('session') ?? null }));
  api = await serve(apiApp);

  // An API that allows another origin only.
  const stranger = createApp();
  stranger.use(cors({ origin: 'https://elsewhere.example' }));
  stranger.get('/items', (ctx) => ctx.json([1]));
  strangerApi = await serve(stranger);

  browser = await launchChromium(chromium);
  page = await browser.context.newPage();
  await page.goto(`${pageOrigin}/`);
});

afterAll(async () => {
  await browser?.close();
  await Promise.all(apps.map((app) => app.close({ timeoutMs: 1000 })));
});

describe('cors() in Chromium', () => {
  test('a simple GET: the body, the exposed header, not the others', async () => {
    const result = await page.evaluate(async (api) => {
      const res = await fetch(`${api}/items`);
      return {
        status: res.status,
        body: await res.json(),
        total: res.headers.get('x-total'),
        internal: res.headers.get('x-internal'),
      };
    }, api);
    expect(result).toEqual({ status: 200, body: [1, 2, 3], total: '3', internal: null });
  });

  test('a preflighted PUT with its own header and a JSON body; the preflight is cached', async () => {
    const before = apiSaw.length;
    const result = await page.evaluate(async (api) => {
      const put = async (n: number) => {
        const res = await fetch(`${api}/items/${n}`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json', 'x-token': 't0k3n' },
          body: JSON.stringify({ done: true }),
        });
        return [res.status, await res.json()];
      };
      return [await put(1), await put(1)];
    }, api);
    const body = { id: '1', token: 't0k3n', body: { done: true } };
    expect(result).toEqual([
      [200, body],
      [200, body],
    ]);
    // One preflight for both (maxAge), each PUT after it.
    expect(apiSaw.slice(before)).toEqual(['OPTIONS /items/1', 'PUT /items/1', 'PUT /items/1']);
  });

  test('credentials: a cookie the API sets is sent back to it', async () => {
    const result = await page.evaluate(async (api) => {
      await fetch(`${api}/login`, { credentials: 'include' });
      const res = await fetch(`${api}/whoami`, { credentials: 'include' });
      return res.json();
    }, api);
    expect(result).toEqual({ session: 's1' });
  });

  test('an error status is readable by the page (cors headers on a 404)', async () => {
    const result = await page.evaluate(async (api) => {
      const res = await fetch(`${api}/nowhere`);
      return { status: res.status, body: await res.json() };
    }, api);
    expect(result.status).toBe(404);
    expect(result.body).toMatchObject({ status: 404 });
  });

  test('a refused origin: the browser blocks the answer; an allowed one reads even a 405', async () => {
    const before = apiSaw.length;
    const result = await page.evaluate(
      async ([stranger, api]) => {
        const outcome = (p: Promise<Response>) =>
          p.then(
            (res) => `answered ${res.status} (Allow: ${res.headers.get('allow')})`,
            (e: Error) => e.name,
          );
        return [
          await outcome(fetch(`${stranger}/items`)),
          await outcome(fetch(`${api}/items/2`, { method: 'DELETE' })),
        ];
      },
      [strangerApi, api] as const,
    );
    // DELETE is among the preflight's methods, so the browser sends it; /items/:id has only PUT,
    // and the page can read that 405 (Allow is not exposed: null). The stranger's answer is
    // blocked: this origin is not its.
    expect(result).toEqual(['TypeError', 'answered 405 (Allow: null)']);
    expect(apiSaw.slice(before)).toEqual(['OPTIONS /items/2', 'DELETE /items/2']);
  });
});
