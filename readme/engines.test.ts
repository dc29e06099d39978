import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { ROOT } from './blocks';

/**
 * The READMEs promise Node 20. Published packages (and everything they pull in at runtime) must
 * accept any Node 20; the workspace's own tools (Vite 7, jsdom 27) need 20.19, the oldest Node
 * 20 this repository is developed and tested on.
 */
const USERS_NODE = '20.0.0';
const WORKSPACE_NODE = '20.19.0';

interface Manifest {
  name: string;
  version: string;
  engines?: { node?: string };
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

const read = (file: string): Manifest => JSON.parse(readFileSync(file, 'utf8'));

/** The directory of `name` as seen from the package in `from` (pnpm's symlinked layout). */
function locate(name: string, from: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name, 'package.json');
    if (existsSync(candidate)) return dirname(realpathSync(candidate));
    if (dirname(dir) === dir) return undefined;
  }
}

function accepts(manifest: Manifest, node: string): boolean {
  const range = manifest.engines?.node;
  return range === undefined || semver.satisfies(node, range, { includePrerelease: true });
}

describe('Node 20', () => {
  it.each(['core', 'react', 'server', 'devtools'])(
    '@keel/%s and its runtime dependencies (transitively) accept any Node 20',
    (name) => {
      const start = join(ROOT, 'packages', name);
      const seen = new Set<string>();
      const refused: string[] = [];
      const queue = [start];
      while (queue.length > 0) {
        const dir = queue.pop()!;
        const manifest = read(join(dir, 'package.json'));
        const id = `${manifest.name}@${manifest.version}`;
        if (seen.has(id)) continue;
        seen.add(id);
        if (!accepts(manifest, USERS_NODE))
          refused.push(`${id} (engines.node ${manifest.engines?.node})`);
        for (const dep of Object.keys({
          ...manifest.dependencies,
          ...manifest.optionalDependencies,
        })) {
          const found = locate(dep, dir);
          if (found !== undefined) queue.push(found);
        }
      }
      expect(seen.size).toBeGreaterThan(0);
      expect(refused).toEqual([]);
    },
  );

  it(`every package installed in the workspace accepts Node ${WORKSPACE_NODE}`, () => {
    const store = join(ROOT, 'node_modules', '.pnpm');
    const lock = readFileSync(join(ROOT, 'pnpm-lock.yaml'), 'utf8');
    const refused: string[] = [];
    let checked = 0;
    for (const entry of readdirSync(store)) {
      const modules = join(store, entry, 'node_modules');
      if (!existsSync(modules)) continue;
      for (const name of readdirSync(modules).flatMap((n) =>
        n.startsWith('@') ? readdirSync(join(modules, n)).map((m) => `${n}/${m}`) : [n],
      )) {
        const file = join(modules, name, 'package.json');
        if (!existsSync(file)) continue;
        const manifest = read(file);
        // The store folder's own package (not its symlinked dependencies), if still locked.
        if (!entry.startsWith(`${manifest.name.replace('/', '+')}@${manifest.version}`)) continue;
        if (!lock.includes(`${manifest.name}@${manifest.version}`)) continue;
        checked++;
        if (!accepts(manifest, WORKSPACE_NODE)) {
          refused.push(
            `${manifest.name}@${manifest.version} (engines.node ${manifest.engines?.node})`,
          );
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
    expect(refused).toEqual([]);
  });
});
