import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLiveApp } from '../server/app';

const root = fileURLToPath(new URL('..', import.meta.url));
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let live: ReturnType<typeof createLiveApp>;
let server: Server;
let base: string;
let context: BrowserContext;
let userDataDir: string;
let distDir: string;

beforeAll(async () => {
  distDir = mkdtempSync(join(tmpdir(), 'keel-react-live-dist-'));
  // vitest runs with NODE_ENV=test, and Vite takes the JSX runtime and React's build from it:
  // build the page as `pnpm start` does, in production.
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    await build({ configFile: join(root, 'vite.config.ts'), build: { outDir: distDir } });
  } finally {
    process.env.NODE_ENV = nodeEnv;
  }
  live = createLiveApp({ distDir, todos: ['first'] });
  server = await live.app.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  userDataDir = mkdtempSync(join(tmpdir(), 'keel-react-live-chromium-'));
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    args: ARGS,
    headless: true,
  });
});

afterAll(async () => {
  await context?.close();
  await live?.app.close();
  for (const dir of [userDataDir, distDir]) if (dir) rmSync(dir, { recursive: true, force: true });
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

  // The other tab never reloads: the hub's `todos-changed` invalidates its list.
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
  expect(live.todos().map((t) => t.title)).toEqual(['from tab one']);
});
