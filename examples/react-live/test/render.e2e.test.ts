import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createLiveApp } from '../server/app';
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
