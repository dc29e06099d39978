import { defineConfig, type Options } from 'tsup';

/**
 * The one build of every package: ESM and CommonJS with declaration files and source maps, for
 * ES2022 (Node 20 and current browsers). A package's tsup.config.ts names its entries only, one
 * per subpath of its `exports` map.
 */
export function packageConfig(entry: Record<string, string>): Options {
  return defineConfig({
    entry,
    format: ['esm', 'cjs'],
    dts: true,
    clean: true,
    sourcemap: true,
    target: 'es2022',
  }) as Options;
}
