import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', production: 'src/production.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'es2022',
});
