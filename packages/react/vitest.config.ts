import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    alias: {
      '@keel/core': fileURLToPath(new URL('../core/src/index.ts', import.meta.url)),
      '@keel/server': fileURLToPath(new URL('../server/src/index.ts', import.meta.url)),
    },
  },
  test: {
    name: 'react',
    environment: 'jsdom',
    setupFiles: ['test/setup.ts'],
    include: ['src/**/*.test.ts', 'src/**/*.test.tsx', 'test/**/*.test.ts', 'test/**/*.test.tsx'],
  },
});
