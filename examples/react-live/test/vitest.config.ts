import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// The end-to-end test: its own config (node environment), outside the root test projects, so the
// unit run never needs a browser. Run it with scripts/ensure-chromium.sh first (see the README).
export default defineConfig({
  resolve: {
    alias: {
      '@keel/core/internals': source('../../../packages/core/src/internals.ts'),
      '@keel/core': source('../../../packages/core/src/index.ts'),
      '@keel/react': source('../../../packages/react/src/index.ts'),
      '@keel/server/redis': source('../../../packages/server/src/redis/index.ts'),
      '@keel/server': source('../../../packages/server/src/index.ts'),
      '@keel/devtools/production': source('../../../packages/devtools/src/production.ts'),
    },
    dedupe: ['react', 'react-dom'],
  },
  // The server renders the page's components (server/render.tsx).
  esbuild: { jsx: 'automatic' },
  test: {
    name: 'react-live-e2e',
    root: source('..'),
    environment: 'node',
    include: ['test/**/*.e2e.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
