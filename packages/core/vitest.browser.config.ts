import { defineConfig } from 'vitest/config';

// The core in a real browser (test/browser/): its own config, outside the unit projects, so the
// unit run never needs Chromium. `pnpm --filter @keel/core test:e2e` installs Debian's chromium
// when it is missing (scripts/ensure-apt.sh), as the example's end-to-end test does.
export default defineConfig({
  test: {
    name: 'core-browser',
    environment: 'node',
    include: ['test/browser/**/*.e2e.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
