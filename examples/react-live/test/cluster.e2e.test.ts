import { rmSync } from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Cluster, startCluster } from '../server/cluster';
import { buildPage, launchChromium } from './browser';

// Two server processes on one Redis (`pnpm start:cluster`): a tab on instance A and a tab on
// instance B, as a load balancer would spread them.

let cluster: Cluster;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let context: BrowserContext;
let distDir: string;

beforeAll(async () => {
  distDir = await buildPage();
  cluster = await startCluster({ distDir });
  browser = await launchChromium();
  context = browser.context;
});

afterAll(async () => {
  await browser?.close();
  await cluster?.stop();
  if (distDir) rmSync(distDir, { recursive: true, force: true });
});

/** Opens the page served by `base`; counts the tab's GET /api/todos. */
async function open(base: string): Promise<{ page: Page; gets: () => number }> {
  const page = await context.newPage();
  let gets = 0;
  page.on('request', (request) => {
    if (request.method() === 'GET' && new URL(request.url()).pathname === '/api/todos') gets++;
  });
  await page.goto(base);
  await page.locator('[data-testid="live"][data-status="open"]').waitFor();
  await page.getByTestId('todos').waitFor();
  return { page, gets: () => gets };
}

const titles = (page: Page) => page.getByTestId('todos').locator('li > span').allTextContents();

it('a change made through instance A shows in a tab connected to instance B', async () => {
  const [urlA, urlB] = cluster.urls as [string, string];
  const a = await open(urlA);
  const b = await open(urlB);
  const initial = ['Try keel', 'Open a second tab'];
  expect(await titles(a.page)).toEqual(initial);
  expect(await titles(b.page)).toEqual(initial);
  const getsA = a.gets();

  await a.page.getByLabel('New todo').fill('added on A');
  await a.page.getByRole('button', { name: 'Add', exact: true }).click();
  // B's stream comes from B's hub, which read A's keel:invalidate from the Redis stream.
  await b.page
    .getByTestId('todos')
    .getByText('added on A', { exact: true })
    .waitFor({ timeout: 15_000 });
  expect(await titles(b.page)).toEqual([...initial, 'added on A']);

  // And back, from B to A.
  await b.page.getByRole('listitem').filter({ hasText: 'Try keel' }).getByRole('button').click();
  await a.page
    .getByTestId('todos')
    .getByText('Try keel', { exact: true })
    .waitFor({ state: 'detached', timeout: 15_000 });
  expect(await titles(a.page)).toEqual(['Open a second tab', 'added on A']);
  // Tab A fetched the list twice: after its own add (its echo was skipped) and after B's delete.
  expect(a.gets() - getsA).toBe(2);
});
