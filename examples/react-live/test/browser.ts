import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium } from 'playwright-core';
import { build } from 'vite';
import { launchChromium as launchWith } from '../../../scripts/chromium.mjs';
import { createLiveApp } from '../server/app';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Builds the page into a fresh temp dir, as `pnpm start` does (production). */
export async function buildPage(): Promise<string> {
  const distDir = mkdtempSync(join(tmpdir(), 'keel-react-live-dist-'));
  // vitest runs with NODE_ENV=test, and Vite takes the JSX runtime and React's build from it.
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    await build({ configFile: join(root, 'vite.config.ts'), build: { outDir: distDir } });
  } finally {
    process.env.NODE_ENV = nodeEnv;
  }
  return distDir;
}

/** Debian's Chromium with a fresh user-data-dir; `close()` also removes the dir. */
export function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  return launchWith(chromium);
}

/**
 * The built page served by one app on 127.0.0.1:0, and a Chromium for it; `close()` stops
 * both and removes the build.
 */
export async function startLivePage(todos: string[]): Promise<{
  live: ReturnType<typeof createLiveApp>;
  base: string;
  context: BrowserContext;
  close(): Promise<void>;
}> {
  const distDir = await buildPage();
  const live = createLiveApp({ distDir, todos });
  const server = await live.app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const browser = await launchChromium().catch(async (error: unknown) => {
    await live.app.close();
    rmSync(distDir, { recursive: true, force: true });
    throw error;
  });
  return {
    live,
    base,
    context: browser.context,
    async close() {
      await browser.close();
      await live.app.close();
      rmSync(distDir, { recursive: true, force: true });
    },
  };
}
