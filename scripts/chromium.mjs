// Debian's Chromium for the browser tests (the core's and the server's test:e2e, the react-live
// example): no browser is downloaded. The caller passes playwright-core's `chromium`, which
// scripts/ cannot resolve itself (each package depends on playwright-core).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The binary `scripts/ensure-apt.sh` installs when it is missing. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

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

/** Chromium with a fresh user-data-dir; `close()` also removes the dir. */
export async function launchChromium(chromium) {
  const userDataDir = mkdtempSync(join(tmpdir(), 'keel-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM_PATH,
      args: ARGS,
      headless: true,
    });
    return {
      context,
      async close() {
        await context.close();
        rmSync(userDataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(userDataDir, { recursive: true, force: true });
    throw error;
  }
}
