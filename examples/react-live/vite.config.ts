import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// The keel packages are bundled from source, so the example runs without building them first.
// JSX goes through esbuild's automatic runtime (no React plugin needed). Vite reads the config
// from the default export: the one default export in keel, by Vite's convention.
export default defineConfig({
  root: source('.'),
  esbuild: { jsx: 'automatic' },
  resolve: {
    alias: {
      '@keel/core/internals': source('../../packages/core/src/internals.ts'),
      '@keel/core': source('../../packages/core/src/index.ts'),
      '@keel/react': source('../../packages/react/src/index.ts'),
      '@keel/devtools/production': source('../../packages/devtools/src/production.ts'),
    },
    dedupe: ['react', 'react-dom'],
  },
  build: { outDir: source('dist'), emptyOutDir: true },
  logLevel: 'warn',
});
