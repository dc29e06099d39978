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
  await page.getByTestId('live').filter({ hasText: 'open' }).waitFor();
  await page.getByTestId('todos').waitFor();
  return page;
}

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
});
