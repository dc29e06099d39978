import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect, it } from 'vitest';
import { until } from '../../../scripts/until.mjs';
import { createLiveApp } from '../server/app';
import { RENDER_HEADER } from '../server/render';
import type { TodoStore } from '../server/todos';

// Server rendering reads the page's data first (server/render.tsx). A store that hangs (a stuck
// database) must not hang every page load with it: the read gives up, and the page is sent with
// its loading state for the browser to fetch, as when a read fails on the server.

const distDir = mkdtempSync(join(tmpdir(), 'keel-react-live-render-'));
writeFileSync(join(distDir, 'index.html'), '<!doctype html><div id="root"><!--app--></div></body>');
let release = () => {};
let close = async () => {};

afterEach(async () => {
  release();
  await close();
});

afterAll(() => {
  rmSync(distDir, { recursive: true, force: true });
});

it('a read that never answers does not hold the page: it is sent with the list loading', async () => {
  const stuck = new Promise<never>((_, reject) => {
    release = () => reject(new Error('released'));
  });
  stuck.catch(() => {});
  const todoStore: TodoStore = {
    list: () => stuck,
    add: () => stuck,
    remove: () => stuck,
  };
  const live = createLiveApp({ distDir, todoStore });
  const server = await live.app.listen(0, '127.0.0.1');
  close = () => live.app.close({ timeoutMs: 1000 });
  const { port } = server.address() as AddressInfo;
  // Bounded here so that the failure is this assertion, not the test's timeout.
  const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(15_000) });
  expect(res.status).toBe(200);
  const html = await res.text();
  expect(html).toContain('Loading…');
  expect(html).toContain('window.__KEEL_STATE__=');
});

it('a browser that goes away stops the rendering: its reads are aborted, not left to time out', async () => {
  const stuck = new Promise<never>((_, reject) => {
    release = () => reject(new Error('released'));
  });
  stuck.catch(() => {});
  let listed = 0;
  const todoStore: TodoStore = {
    list: () => {
      listed++;
      return stuck;
    },
    add: () => stuck,
    remove: () => stuck,
  };
  const live = createLiveApp({ distDir, todoStore });
  // Longer than the test: only the browser's disconnect can end these reads.
  live.control.renderReadTimeoutMs = 600_000;
  const server = await live.app.listen(0, '127.0.0.1');
  close = () => live.app.close({ timeoutMs: 1000 });
  const { port } = server.address() as AddressInfo;
  // The server's own reads of its API, as its socket sees them: ended by whom.
  const reads: { finished: boolean | null }[] = [];
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.headers[RENDER_HEADER] === undefined) return;
    const read = { finished: null as boolean | null };
    reads.push(read);
    res.once('close', () => {
      read.finished = res.writableFinished;
    });
  });
  const browser = new AbortController();
  const page = fetch(`http://127.0.0.1:${port}/`, { signal: browser.signal });
  page.catch(() => {});
  // Both reads (list, stats) are waiting on the stuck store.
  await until(() => listed === 2, 'both reads at the store');
  expect(reads).toHaveLength(2);
  browser.abort();
  await until(() => reads.every((r) => r.finished !== null), 'the reads to be closed');
  // Closed by the client (the rendering's reads were aborted), not answered.
  expect(reads.map((r) => r.finished)).toEqual([false, false]);
  await expect(page).rejects.toThrow();
});
