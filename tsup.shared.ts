import { defineConfig, type Options } from 'tsup';

/**
 * The one build of every package: ESM and CommonJS with declaration files and source maps, for
 * ES2022 (Node 20 and current browsers). A package's tsup.config.ts names its entries only, one
 * per subpath of its `exports` map. `splitting` for CommonJS too (tsup splits only ESM by
 * default): the entries of a package share its modules in both builds, so state a module keeps
 * (the core's client registry that `@keel/core/internals`' hydration reads) exists once.
 * `treeshake` makes rollup write the chunks: tsup's own CommonJS splitting runs sucrase, which
 * turns `?.`, `??` and class fields into helper calls on the hot paths.
 */
export function packageConfig(entry: Record<string, string>): Options {
  return defineConfig({
    entry,
    format: ['esm', 'cjs'],
    dts: true,
    clean: true,
    splitting: true,
    treeshake: true,
    sourcemap: true,
    target: 'es2022',
  }) as Options;
}
