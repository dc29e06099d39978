import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startLivePage } from './browser';

let live: Awaited<ReturnType<typeof startLivePage>>['live'];
let base: string;
let context: BrowserContext;
let close: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ live, base, context, close } = await startLivePage(['first']));
});

afterAll(async () => {
  await close?.();
});

async function open(): Promise<Page> {
  const page = await context.newPage();
  await page.goto(base);
  await page.locator('main[data-hydrated]').waitFor();
  await streamOpen(page).waitFor();
  await page.getByTestId('todos').waitFor();
  return page;
}

/** The connection pill once it says the stream is open. */
const streamOpen = (page: Page) => page.locator('[data-testid="live"][data-status="open"]');

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
  await writer.getByRole('button', { name: 'Add', exact: true }).click();

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
  expect(html).toMatch(/<ul class="todos" data-testid="todos">.*<span>.+<\/span>/s);
  // The devtools' toggle is rendered with the page (closed: a button).
  expect(html).toContain('keel devtools</button>');
  expect(html).toMatch(/data-testid="stats">\d+ todos? on the server/);
  expect(html).toContain('window.__KEEL_STATE__=');
  const recoverable: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') recoverable.push(message.text());
  });
  await page.locator('main[data-hydrated]').waitFor();
  await streamOpen(page).waitFor();
  await idle(page);
  // Zero reads on hydration: the browser's keys (on /api) found the server's entries (fetched
  // on an internal address), so neither the list nor the stats were asked for again.
  expect({ todos: reads('/api/todos'), stats: reads('/api/stats') }).toEqual(before);
  expect(recoverable).toEqual([]);
  await page.close();
});

it('every request of a page load succeeds: no favicon (or any other) 404', async () => {
  const page = await context.newPage();
  const failed: string[] = [];
  page.on('response', (response) => {
    if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
  });
  page.on('requestfailed', (request) => failed.push(`failed ${request.url()}`));
  await page.goto(base);
  await page.locator('main[data-hydrated]').waitFor();
  await streamOpen(page).waitFor();
  await idle(page);
  expect(failed).toEqual([]);
  await page.close();
});

it('a suspense query that fails says why once, and Try again recovers', async () => {
  live.control.failStats = true;
  const before = reads('/api/stats');
  const page = await context.newPage();
  try {
    await page.goto(base);
    // The server could not read the stats: their boundary is rendered in the browser, whose read
    // fails too (2 attempts), and the error boundary shows the HTTP error.
    const alert = page.getByTestId('stats-error');
    await alert.waitFor({ timeout: 15_000 });
    // It says why, in words, without the request's URL.
    expect(await alert.textContent()).toBe(
      'Stats are unavailable. The server had a problem (HTTP 500).Try again',
    );
    await idle(page, 1000);
    expect(reads('/api/stats') - before).toBe(2); // no read loop
    expect(await alert.textContent()).toContain('HTTP 500'); // not a CircuitOpenError

    live.control.failStats = false;
    await alert.getByRole('button', { name: 'Try again' }).click();
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
    await other.getByRole('button', { name: 'Add', exact: true }).click();
    await writer.getByText('refreshing', { exact: false }).waitFor();
    // The other tab's own refetch and the writer's have reached the server.
    await expect.poll(() => reads('/api/todos') - before).toBeGreaterThanOrEqual(2);
    // ...and adds its own item while that refetch (which cannot know the item) is in flight.
    live.control.postDelay = 1600;
    await writer.getByLabel('New todo').fill('optimistic one');
    const add = writer.getByRole('button', { name: 'Add', exact: true });
    await add.click();
    // Pending: the button is disabled until the server answers.
    expect(await add.isDisabled()).toBe(true);
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

it('first load: "Loading" alone, no "refreshing" beside it', async () => {
  // The server could not read the list while rendering: the browser loads it, slowly.
  live.control.failRenderReads = true;
  live.control.todosDelay = 800;
  const page = await context.newPage();
  try {
    await page.goto(base);
    const section = page.getByRole('region', { name: 'Todos' });
    await section.getByText('Loading…').waitFor();
    expect(await page.getByText('refreshing', { exact: false }).count()).toBe(0);
    await page.getByTestId('todos').waitFor();
  } finally {
    live.control.failRenderReads = false;
    live.control.todosDelay = 0;
    await page.close();
  }
});

it('the connection pill says Offline while the browser is offline, and Live once back', async () => {
  const page = await open();
  try {
    await context.setOffline(true);
    await page.locator('[data-testid="live"][data-status="offline"]').waitFor();
    expect(await page.getByTestId('live').textContent()).toBe('Offline');
  } finally {
    await context.setOffline(false);
  }
  await streamOpen(page).waitFor({ timeout: 15_000 });
  expect(await page.getByTestId('live').textContent()).toBe('Live');
  await page.close();
});

it('a tab that was offline catches up once back: what it missed arrives, no reload', async () => {
  const page = await open();
  const before = await titles(page);
  let added: { id: number } | undefined;
  try {
    await context.setOffline(true);
    await page.locator('[data-testid="live"][data-status="offline"]').waitFor();
    // Added elsewhere while this tab is offline (from Node: the browser has no network now).
    const res = await fetch(`${base}/api/todos`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'added while offline' }),
    });
    expect(res.status).toBe(201);
    added = (await res.json()) as { id: number };
    // Not heard while offline (the stream is down)...
    await idle(page);
    expect(await titles(page)).toEqual(before);
  } finally {
    await context.setOffline(false);
  }
  // ...but once back: the stream reconnects with Last-Event-ID, the hub replays the missed
  // invalidation, and the list is refetched.
  await page
    .getByTestId('todos')
    .getByText('added while offline', { exact: true })
    .waitFor({ timeout: 15_000 });
  expect(await titles(page)).toEqual([...before, 'added while offline']);
  await streamOpen(page).waitFor({ timeout: 15_000 });
  await page.close();
  await fetch(`${base}/api/todos/${added!.id}`, { method: 'DELETE' });
});

it('an add the server refuses explains itself and can be dismissed', async () => {
  const page = await open();
  live.control.refuseAdds = true;
  try {
    await page.getByLabel('New todo').fill('refused');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    // Why, in words, without the request's URL.
    expect(await alert.locator('p').textContent()).toBe(
      'Couldn’t add “refused”. The server refused it (HTTP 422).',
    );
    // The optimistic row was rolled back.
    expect(await titles(page)).not.toContain('refused');
    await alert.getByRole('button', { name: 'Dismiss' }).click();
    await alert.waitFor({ state: 'detached' });

    // Refused again; Try again, once the server accepts, adds it and the notice goes.
    await page.getByLabel('New todo').fill('accepted later');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await alert.waitFor();
    live.control.refuseAdds = false;
    await alert.getByRole('button', { name: 'Try again' }).click();
    await page
      .getByTestId('todos')
      .locator('li:not([data-pending]) > span', { hasText: 'accepted later' })
      .waitFor();
    await alert.waitFor({ state: 'detached' });
  } finally {
    live.control.refuseAdds = false;
    await page.close();
  }
});
