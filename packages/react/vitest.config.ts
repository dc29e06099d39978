import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    alias: {
      '@keel/core/internals': fileURLToPath(new URL('../core/src/internals.ts', import.meta.url)),
      '@keel/core': fileURLToPath(new URL('../core/src/index.ts', import.meta.url)),
      '@keel/server': fileURLToPath(new URL('../server/src/index.ts', import.meta.url)),
    },
  },
  test: {
    name: 'react',
    environment: 'jsdom',
    setupFiles: ['test/setup.ts'],
    include: ['src/**/*.test.ts', 'src/**/*.test.tsx', 'test/**/*.test.ts', 'test/**/*.test.tsx'],
    // Type tests of the public hooks: checked by tsc (vitest typecheck), never run.
    typecheck: {
      enabled: true,
      include: ['test/**/*.test-d.ts', 'test/**/*.test-d.tsx'],
      tsconfig: fileURLToPath(new URL('./tsconfig.typecheck.json', import.meta.url)),
    },
  },
});
