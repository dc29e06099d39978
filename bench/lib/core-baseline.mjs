// Builds of @keel/core's sources for the benchmarks: modules that are not public exports (the
// Scheduler alone), and a second build from another git revision to run in the same rounds as
// this one (BENCH_BASELINE=<rev>: what a change gained, side by side on the same machine load).
import { execSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const out = join(here, '..', '.out');

/**
 * Bundles TypeScript source (esbuild, ESM for Node) into bench/.out/<name>.mjs and imports it.
 * `source`: the module text, resolved from `dir` (default packages/core/src).
 */
export async function bundleSource(name, source, dir = join(root, 'packages', 'core', 'src')) {
  const { build } = await import('esbuild');
  const outfile = join(out, `${name}.mjs`);
  mkdirSync(dirname(outfile), { recursive: true });
  await build({
    stdin: { contents: source, resolveDir: dir, loader: 'ts' },
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'es2022',
    outfile,
    logLevel: 'warning',
  });
  return import(pathToFileURL(outfile).href);
}

/** @keel/core as it was at `rev` (packages/core/src from git); returns the module and a label. */
export async function loadCoreAt(rev) {
  const short = execSync(`git rev-parse --short ${rev}`, { cwd: root }).toString().trim();
  const src = join(out, `core-${short}-src`);
  rmSync(src, { recursive: true, force: true });
  mkdirSync(src, { recursive: true });
  execSync(`git archive ${short} packages/core/src | tar -x -C ${src}`, { cwd: root });
  const core = await bundleSource(
    `core-${short}`,
    "export * from './index.ts';",
    join(src, 'packages', 'core', 'src'),
  );
  return { core, label: `keel@${short}` };
}
