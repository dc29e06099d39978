import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      'packages/*/vitest.config.ts',
      'packages/core/vitest.composed.config.ts',
      'examples/node-demo/vitest.config.ts',
      'readme/vitest.config.ts',
    ],
  },
});
