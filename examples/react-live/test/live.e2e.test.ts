import { rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLiveApp } from '../server/app';
import { buildPage, launchChromium } from './browser';

let live: ReturnType<typeof createLiveApp>;
let server: Server;
let base: string;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let context: BrowserContext;
let distDir: string;

beforeAll(async () => {
  distDir = await buildPage();
  live = createLiveApp({ distDir, todos: ['first'] });
  server = await live.app.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
  context = browser.context;
});

afterAll(async () => {
  await browser?.close();
  await live?.app.close();
  if (distDir) rmSync(distDir, { recursive: true, force: true });
});

async function open(): Promise<Page> {
  const page = await context.newPage();
  await page.goto(base);
  await page.locator('main[data-hydrated]').waitFor();
  await page.getByTestId('live').filter({ hasText: 'open' }).waitFor();
  await page.getByTestId('todos').waitFor();
  return page;
}

/** Reads browsers made of a path so far (the server's own rendering reads are not counted). */
const reads = (path: string) => live.control.browserReads.get(path) ?? 0;

/** Lets a page run for a while (a loop of requests, if there were one, would show). */
const idle = (page: Page, ms = 500) => page.waitForTimeout(ms);

const titles = (page: Page) => page.getByTestId('todos').locator('li > span').allTextContents();

it('an item added in one tab appears in the other, pushed by server events', async () => {
  const writer = await open();
  const reader = await open();
  expect(await titles(writer)).toEqual(['first']);
  expect(await titles(reader)).toEqual(['first']);
  expect(live.hub.size).toBe(2);

  await writer.getByLabel('New todo').fill('from tab one');
  await writer.getByRole('button', { name: 'Add' }).click();

  // The other tab never reloads: the hub's `keel:invalidate` refetches its list.
  await reader
    .getByTestId('todos')
    .getByText('from tab one', { exact: true })
    .waitFor({ timeout: 15_000 });
  expect(await titles(reader)).toEqual(['first', 'from tab one']);
  expect(await reader.getByTestId('received').textContent()).toBe('1');
  await writer
    .getByTestId('todos')
    .locator('li:not([data-pending]) > span', { hasText: 'from tab one' })
    .waitFor();
  expect(await titles(writer)).toEqual(['first', 'from tab one']);

  // And back: deleting in the reader updates the writer.
  await reader.getByRole('listitem').filter({ hasText: 'first' }).getByRole('button').click();
  await writer
    .getByTestId('todos')
    .getByText('first', { exact: true })
    .waitFor({ state: 'detached' });
  expect(await titles(writer)).toEqual(['from tab one']);
  expect((await live.todos()).map((t) => t.title)).toEqual(['from tab one']);
  // Each tab holds a stream: close them, so later tests have the browser's connections to the
  // server (six per origin) for their own reads.
  await writer.close();
  await reader.close();
});

it('server rendering: the page arrives with the data and hydrates without a request', async () => {
  const before = { todos: reads('/api/todos'), stats: reads('/api/stats') };
  const page = await context.newPage();
  const response = await page.goto(base);
  // The HTML itself holds the list and the stats (rendered with renderToPipeableStream).
  const html = (await response!.text()).replace(/<!-- -->/g, '');
  expect(html).toMatch(/<ul data-testid="todos">.*<span>.+<\/span>/s);
  expect(html).toMatch(/data-testid="stats">\d+ todos? on the server/);
  expect(html).toContain('window.__KEEL_STATE__=');
  const recoverable: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') recoverable.push(message.text());
  });
  await page.locator('main[data-hydrated]').waitFor();
  await page.getByTestId('live').filter({ hasText: 'open' }).waitFor();
  await idle(page);
  // Zero reads on hydration: the browser's keys (on /api) found the server's entries (fetched
  // on an internal address), so neither the list nor the stats were asked for again.
  expect({ todos: reads('/api/todos'), stats: reads('/api/stats') }).toEqual(before);
  expect(recoverable).toEqual([]);
  await page.close();
});

it('a suspense query that fails shows the HTTP error once, and Retry recovers', async () => {
  live.control.failStats = true;
  const before = reads('/api/stats');
  const page = await context.newPage();
  try {
    await page.goto(base);
    // The server could not read the stats: their boundary is rendered in the browser, whose read
    // fails too (2 attempts), and the error boundary shows the HTTP error.
    const alert = page.getByTestId('stats-error');
    await alert.waitFor({ timeout: 15_000 });
    expect(await alert.textContent()).toContain('Stats failed: HTTP 500');
    await idle(page, 1000);
    expect(reads('/api/stats') - before).toBe(2); // no read loop
    expect(await alert.textContent()).toContain('HTTP 500'); // not a CircuitOpenError

    live.control.failStats = false;
    await alert.getByRole('button', { name: 'Retry' }).click();
    await page.getByTestId('stats').waitFor();
    expect(await page.getByTestId('stats').textContent()).toMatch(/^\d+ todos? on the server$/);
    expect(reads('/api/stats') - before).toBe(3);
  } finally {
    live.control.failStats = false;
    await page.close();
  }
});

it('an optimistic add does not flicker while a refetch of the list is in flight', async () => {
  const writer = await open();
  const other = await open();
  // Every change this tab's list goes through, as text, from now on.
  await writer.evaluate(() => {
    const list = document.querySelector('[data-testid="todos"]')!;
    const seen: string[] = [];
    (window as unknown as { seen: string[] }).seen = seen;
    const record = () => {
      const text = [...list.querySelectorAll('li > span')].map((s) => s.textContent).join('|');
      if (seen.at(-1) !== text) seen.push(text);
    };
    record();
    new MutationObserver(record).observe(list, {
      childList: true,
      subtree: true,
      characterData: true,
    });
  });
  try {
    // The list now answers slowly, with what it held when asked; an add takes even longer, so
    // a refetch started before it lands while it runs.
    live.control.todosDelay = 800;
    // The other tab adds: the writer hears it and starts refetching the list (slow)...
    const before = reads('/api/todos');
    await other.getByLabel('New todo').fill('from the other tab');
    await other.getByRole('button', { name: 'Add' }).click();
    await writer.getByText('refreshing', { exact: false }).waitFor();
    // The other tab's own refetch and the writer's have reached the server.
    await expect.poll(() => reads('/api/todos') - before).toBeGreaterThanOrEqual(2);
    // ...and adds its own item while that refetch (which cannot know the item) is in flight.
    live.control.postDelay = 1600;
    await writer.getByLabel('New todo').fill('optimistic one');
    await writer.getByRole('button', { name: 'Add' }).click();
    await writer
      .getByTestId('todos')
      .locator('li:not([data-pending]) > span', { hasText: 'optimistic one' })
      .waitFor({ timeout: 20_000 });
    await writer.getByText('refreshing', { exact: false }).waitFor({ state: 'detached' });
  } finally {
    live.control.todosDelay = 0;
    live.control.postDelay = 0;
  }
  const seen = await writer.evaluate(() => (window as unknown as { seen: string[] }).seen);
  const first = seen.findIndex((text) => text.split('|').includes('optimistic one'));
  expect(first).toBeGreaterThan(0);
  // Once shown, the row never left the list.
  for (const text of seen.slice(first)) expect(text.split('|')).toContain('optimistic one');
  expect(seen.at(-1)!.split('|')).toEqual(
    expect.arrayContaining(['from the other tab', 'optimistic one']),
  );
  await writer.close();
  await other.close();
});
