import { readFileSync, writeFileSync } from 'node:fs';
import { defineConfig, type Options } from 'tsup';

/** What a package's build adds to the shared one. */
export interface PackageBuild {
  /**
   * React packages: the entries (all of them for `true`) that are client modules for React
   * Server Components, in both formats (see markClientModules).
   */
  client?: boolean | readonly string[];
  /** Runs once the entries are written (and marked). */
  afterBuild?: () => void | Promise<void>;
}

/**
 * The one build of every package: ESM and CommonJS with declaration files and source maps, for
 * ES2022 (Node 20 and current browsers). A package's tsup.config.ts names its entries only, one
 * per subpath of its `exports` map. `splitting` for CommonJS too (tsup splits only ESM by
 * default): the entries of a package share its modules in both builds, so state a module keeps
 * (the core's client registry that `@keel/core/internals`' hydration reads) exists once.
 * `treeshake` makes rollup write the chunks: tsup's own CommonJS splitting runs sucrase, which
 * turns `?.`, `??` and class fields into helper calls on the hot paths.
 */
export function packageConfig(
  entry: Record<string, string>,
  { client = false, afterBuild }: PackageBuild = {},
): Options {
  const marked = client === true ? Object.keys(entry) : client || [];
  const built = marked.flatMap((name) => [`dist/${name}.js`, `dist/${name}.cjs`]);
  return defineConfig({
    entry,
    format: ['esm', 'cjs'],
    dts: true,
    clean: true,
    splitting: true,
    treeshake: true,
    sourcemap: true,
    target: 'es2022',
    onSuccess:
      built.length > 0 || afterBuild
        ? async () => {
            markClientModules(built);
            await afterBuild?.();
          }
        : undefined,
  }) as Options;
}

const DIRECTIVE = "'use client';";

/**
 * Marks built entry files as client modules for React Server Components (the React packages'
 * README, "React Server Components"): `'use client'` at their top, so a Server Component that
 * imports them gets client references. Written after the build, because a bundler drops a
 * module-level directive while it bundles (rollup strips the one in the sources and says so);
 * each source map gets an empty first line to match. Only entries: the chunks they import are
 * loaded through them.
 */
function markClientModules(files: readonly string[]): void {
  for (const file of files) {
    const code = readFileSync(file, 'utf8');
    if (code.startsWith(DIRECTIVE)) continue;
    writeFileSync(file, `${DIRECTIVE}\n${code}`);
    const map = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { mappings: string };
    map.mappings = `;${map.mappings}`;
    writeFileSync(`${file}.map`, JSON.stringify(map));
  }
}
