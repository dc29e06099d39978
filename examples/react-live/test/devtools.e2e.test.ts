import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startLivePage } from './browser';

// The devtools on the showcase page, in Chromium: each view opened and exercised, by mouse and
// keyboard, at 360 px and in the dark scheme. Every step saves a screenshot under
// examples/react-live/test-artifacts: into its `run/` folder (not committed) on every test run,
// into the folder itself, the images the READMEs show, with `pnpm screenshots`
// (KEEL_SCREENSHOTS=1), so a test run does not rewrite the committed images. The folder is
// created when missing (a fresh clone has only the committed images).

const artifacts = fileURLToPath(new URL('../test-artifacts', import.meta.url));
const shots = process.env.KEEL_SCREENSHOTS === '1' ? artifacts : join(artifacts, 'run');
mkdirSync(shots, { recursive: true });

let live: Awaited<ReturnType<typeof startLivePage>>['live'];
let base: string;
let context: BrowserContext;
let close: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ live, base, context, close } = await startLivePage([
    'Try keel',
    'Open a second tab',
    'Open the devtools',
  ]));
});

afterAll(async () => {
  await close?.();
});

const reads = (path: string) => live.control.browserReads.get(path) ?? 0;

async function shot(target: Page | Locator, name: string): Promise<void> {
  await target.screenshot({ path: join(shots, name), animations: 'disabled' });
}

async function open(width = 1100, height = 760): Promise<Page> {
  const page = await context.newPage();
  await page.setViewportSize({ width, height });
  await page.emulateMedia({ colorScheme: 'light', reducedMotion: 'reduce' });
  await page.goto(base);
  await page.locator('main[data-hydrated]').waitFor();
  await page.locator('[data-testid="live"][data-status="open"]').waitFor();
  return page;
}

const panelOf = (page: Page) => page.getByRole('region', { name: 'keel devtools' });
const tab = (page: Page, name: string) =>
  panelOf(page).getByRole('tab', { name: new RegExp(`^${name}`) });
const focusedText = (page: Page) => page.evaluate(() => document.activeElement?.textContent);

it('the devtools are one click away and show each view as requests run', async () => {
  const page = await open();
  await shot(page, 'page.png');

  // Keyboard: the toggle opens the panel with focus on its first tab.
  const toggle = page.getByRole('button', { name: 'keel devtools' });
  await toggle.focus();
  await page.keyboard.press('Enter');
  const panel = panelOf(page);
  await panel.waitFor();
  expect(await focusedText(page)).toBe('Cache');

  // Cache: the entries the server handed over; one selected, its data and headers.
  const cache = panel.getByRole('table', { name: 'Cached responses' });
  await cache.getByRole('button', { name: /\/todos$/ }).click();
  const detail = panel.getByRole('region', { name: 'Cache entry GET /todos' });
  await detail.getByText('"Try keel"').waitFor();
  await detail.getByText('content-type').waitFor();
  await shot(panel, 'devtools-cache.png');
  // Invalidate from the panel: the page's list reads it again.
  const before = reads('/api/todos');
  await detail.getByRole('button', { name: 'Invalidate' }).click();
  await expect.poll(() => reads('/api/todos')).toBe(before + 1);

  // Requests: the stats fail with a Retry-After; refetching them shows the retry and its wait.
  // (Refetch, not Invalidate: the entry stays, so the page keeps showing the last stats.)
  live.control.failStats = true;
  live.control.statsRetryAfter = 2;
  await cache.getByRole('button', { name: /\/stats$/ }).click();
  const refetch = panel
    .getByRole('region', { name: 'Cache entry GET /stats' })
    .getByRole('button', { name: 'Refetch' });
  await refetch.click();
  await tab(page, 'Cache').focus();
  await page.keyboard.press('ArrowRight');
  expect(await focusedText(page)).toMatch(/^Requests/);
  const stats = panel.locator('li[data-state]', { hasText: 'GET /stats' }).first();
  await expect.poll(() => stats.getAttribute('data-state'), { timeout: 10_000 }).toBe('retrying');
  expect(await stats.textContent()).toMatch(
    /got HTTP 503 Service Unavailable; retry in \d\.\d s \(waits 2\.0 s, Retry-After\)/,
  );
  await shot(panel, 'devtools-requests.png');
  await expect.poll(() => stats.getAttribute('data-state'), { timeout: 10_000 }).toBe('failed');

  // Endpoints: four more failing reads of the stats (Refetch, a 500 now) open their circuit
  // (five failed requests in a row; a request counts once, however many attempts it made).
  live.control.statsRetryAfter = 0;
  await tab(page, 'Cache').click();
  await cache.getByRole('button', { name: /\/stats$/ }).click();
  for (let i = 0; i < 4; i++) {
    await expect.poll(() => refetch.isEnabled(), { timeout: 10_000 }).toBe(true);
    await refetch.click();
    await expect.poll(() => refetch.isEnabled(), { timeout: 10_000 }).toBe(false);
  }
  await tab(page, 'Endpoints').click();
  const statsRow = panel.locator('tr[data-endpoint="GET /api/stats"]');
  await statsRow.getByText('open', { exact: true }).waitFor({ timeout: 10_000 });
  expect(await statsRow.textContent()).toMatch(/half-open in \d+(\.\d)? s/);
  expect(await tab(page, 'Endpoints').textContent()).toContain('1 circuit open');
  await panel.locator('tr[data-endpoint="GET /api/todos"]').waitFor();
  await shot(panel, 'devtools-endpoints.png');
  // Meanwhile the page shows the stats it has: a cached copy is served while the circuit is open.
  await page.getByTestId('stats').waitFor();
  live.control.failStats = false;

  // Scheduler: a slow list read holds one of the six slots.
  live.control.todosDelay = 1500;
  await tab(page, 'Scheduler').click();
  const active = panel.getByRole('region', { name: 'Active attempts' });
  await active.waitFor();
  await tab(page, 'Cache').click();
  await cache.getByRole('button', { name: /\/todos$/ }).click();
  await panel.getByRole('button', { name: 'Invalidate' }).click();
  await tab(page, 'Scheduler').click();
  await expect.poll(() => active.textContent()).toContain('1 / 6');
  await shot(panel, 'devtools-scheduler.png');
  live.control.todosDelay = 0;

  // Live events: another tab adds an item; this tab's stream receives keel:invalidate.
  const other = await open();
  await other.getByLabel('New todo').fill('added in the other tab');
  await other.getByRole('button', { name: 'Add', exact: true }).click();
  await page.getByTestId('todos').getByText('added in the other tab').waitFor();
  await tab(page, 'Live events').click();
  const stream = panel.getByRole('region', { name: /^Event stream .*\/api\/events$/ });
  await stream.getByText('open', { exact: true }).waitFor();
  await stream.getByText('keel:invalidate').first().waitFor();
  const event = stream.locator('summary').first();
  await event.click();
  await stream.getByText('"/api/todos"', { exact: true }).waitFor();
  await shot(panel, 'devtools-events.png');
  // The keyboard opens and closes it too (its data is drawn only while it is open).
  const isOpen = () => event.evaluate((s) => (s.parentElement as HTMLDetailsElement).open);
  await event.focus();
  await page.keyboard.press('Space');
  await expect.poll(isOpen).toBe(false);
  await stream.getByText('"/api/todos"', { exact: true }).waitFor({ state: 'detached' });
  await page.keyboard.press('Enter');
  await expect.poll(isOpen).toBe(true);
  await stream.getByText('"/api/todos"', { exact: true }).waitFor();
  await other.close();

  // Esc closes the panel and gives focus back to the toggle.
  await page.keyboard.press('Escape');
  await panel.waitFor({ state: 'detached' });
  expect(await focusedText(page)).toBe('keel devtools');
  await page.close();
});

it('the panel holds at 360 px wide and follows the dark colour scheme', async () => {
  const page = await open(360, 740);
  await page.getByRole('button', { name: 'keel devtools' }).click();
  const panel = panelOf(page);
  await panel.getByRole('button', { name: /\/todos$/ }).click();
  await panel.getByRole('region', { name: 'Cache entry GET /todos' }).waitFor();
  // Nothing wider than the screen: the page does not scroll sideways.
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
  const box = await panel.boundingBox();
  expect(box!.width).toBeLessThanOrEqual(360);
  // The tabs do not fit: they scroll inside their own strip rather than run under the bar's
  // buttons.
  const strip = await panel.getByRole('tablist').evaluate((list) => ({
    overflows: list.scrollWidth > list.clientWidth,
    overflowX: getComputedStyle(list).overflowX,
  }));
  expect(strip).toEqual({ overflows: true, overflowX: 'auto' });
  await shot(page, 'devtools-narrow.png');

  const background = () => panel.evaluate((element) => getComputedStyle(element).backgroundColor);
  expect(await background()).toBe('rgb(255, 255, 255)');
  await page.emulateMedia({ colorScheme: 'dark' });
  expect(await background()).toBe('rgb(22, 25, 31)');
  expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe(
    'rgb(16, 19, 24)',
  );
  await page.setViewportSize({ width: 1100, height: 760 });
  await tab(page, 'Requests').click();
  await shot(page, 'devtools-dark.png');
  await page.close();
});
