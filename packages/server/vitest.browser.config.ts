import { defineConfig } from 'vitest/config';

// The server's streams in a real browser (test/browser/): its own config, outside the unit
// projects, so the unit run never needs Chromium. `pnpm --filter @keel/server test:e2e` installs
// Debian's chromium when it is missing (scripts/ensure-apt.sh), as the example's test does.
export default defineConfig({
  test: {
    name: 'server-browser',
    environment: 'node',
    include: ['test/browser/**/*.e2e.test.ts'],
    testTimeout: 90_000,
    hookTimeout: 120_000,
  },
});
