import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// The README checks: every code block compiled against the workspace sources, the ones marked
// `run` executed (see "Code blocks in the READMEs" in the root README).
export default defineConfig({
  resolve: {
    alias: {
      '@keel/core/internals': source('../packages/core/src/internals.ts'),
      '@keel/core': source('../packages/core/src/index.ts'),
      '@keel/react': source('../packages/react/src/index.ts'),
      '@keel/server': source('../packages/server/src/index.ts'),
      '@keel/devtools/production': source('../packages/devtools/src/production.ts'),
      '@keel/devtools': source('../packages/devtools/src/index.ts'),
    },
  },
  test: {
    name: 'readme',
    root: source('.'),
    include: ['*.test.ts', '*.test.tsx'],
    testTimeout: 60_000,
  },
});
