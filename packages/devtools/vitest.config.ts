import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  resolve: {
    alias: {
      '@keel/core/internals': source('../core/src/internals.ts'),
      '@keel/core': source('../core/src/index.ts'),
      '@keel/react': source('../react/src/index.ts'),
      '@keel/server': source('../server/src/index.ts'),
    },
  },
  test: {
    name: 'devtools',
    environment: 'jsdom',
    setupFiles: ['test/setup.ts'],
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
  },
});
