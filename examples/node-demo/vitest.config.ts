import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'node-demo',
    environment: 'node',
    include: ['test/**/*.test.ts'],
    // The smoke test runs the whole demo (about 12 s) as a child process, once, in beforeAll.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
