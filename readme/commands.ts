import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './blocks';

/** The workspace's vitest projects, by name (the root config lists their configs). */
const PROJECTS = new Set(
  [
    'packages/core/vitest.config.ts',
    'packages/core/vitest.composed.config.ts',
    'packages/react/vitest.config.ts',
    'packages/server/vitest.config.ts',
    'packages/devtools/vitest.config.ts',
    'examples/node-demo/vitest.config.ts',
    'readme/vitest.config.ts',
  ].map((config) => /name: '([^']+)'/.exec(readFileSync(join(ROOT, config), 'utf8'))![1]!),
);

/** The folder of each workspace package, by its name (`@keel/example-react-live`). */
const PACKAGE_DIRS = new Map(
  ['packages', 'examples'].flatMap((parent) =>
    readdirSync(join(ROOT, parent))
      .filter((name) => existsSync(join(ROOT, parent, name, 'package.json')))
      .map((name) => {
        const dir = `${parent}/${name}`;
        return [JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')).name, dir];
      }),
  ),
);

/**
 * What a README may tell a user to `npm install`: a published keel package, or a package one
 * of them depends on (a peer such as react or ioredis).
 */
const INSTALLABLE = new Set(
  [...PACKAGE_DIRS.entries()]
    .filter(([, dir]) => dir.startsWith('packages/'))
    .flatMap(([name, dir]) => {
      const pkg = JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8'));
      return [name, ...Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies })];
    }),
);

/**
 * Checks one shell command run in `dir` (relative to the root); returns the folder the next
 * command runs in (`cd` paths are from the root, as the READMEs write them, and must exist).
 * Leading `NAME=value` assignments are skipped: the command after them is checked. pnpm: the
 * pinned version, and a script that exists where it runs (the root's scripts count everywhere:
 * the READMEs say to run them from the root); `--filter <package> <script>`: a script of that
 * package; vitest `--project`: a project that exists; `--config` and the test files it is given,
 * and the scripts `sh`, `node` (any flags) and `npx tsx` run: files that exist; `npm install`:
 * packages keel publishes or depends on.
 */
export function checkCommand(
  command: string,
  dir: string,
  where: string,
  version: string,
  bad: string[],
): string {
  command = command.replace(/^(?:\w+=\S*\s+)+/, '');
  const cd = /^cd\s+(\S+)/.exec(command);
  // The READMEs write `cd` from the repository root ("From the repository root: cd examples/x").
  if (cd) {
    if (!existsSync(join(ROOT, cd[1]!))) bad.push(`${where}: no folder ${cd[1]}`);
    return cd[1]!;
  }
  const words = command.split(/\s+/);
  const pinned = /^npx -y pnpm@(\S+)/.exec(command);
  if (pinned || words[0] === 'pnpm') {
    if (pinned && pinned[1] !== version)
      bad.push(`${where}: pnpm@${pinned[1]} (pinned: ${version})`);
    // Corepack cannot fetch pnpm on a fresh machine: a bare `pnpm` is not a command that works.
    if (!pinned) bad.push(`${where}: bare \`pnpm\` (write \`npx -y pnpm@${version}\`)`);
    let args = words.slice(pinned ? 3 : 1);
    let scriptsDir = dir;
    if (args[0] === '--filter') {
      const target = PACKAGE_DIRS.get(args[1]);
      if (target === undefined) bad.push(`${where}: no workspace package ${args[1]}`);
      scriptsDir = target ?? dir;
      args = args.slice(2);
    }
    if (args[0] === 'run') args = args.slice(1);
    const script = args[0];
    if (script === undefined || ['install', 'exec', 'add', '-r'].includes(script)) return dir;
    const scripts = {
      ...scriptsOf(join(ROOT, scriptsDir)),
      ...(scriptsDir === dir && dir !== '.' ? scriptsOf(ROOT) : {}),
    };
    if (!(script in scripts)) bad.push(`${where}: no script "${script}" in ${scriptsDir}`);
    return dir;
  }
  if (/^npm (?:install|i|add)\s/.test(command)) {
    for (const name of words.slice(2).filter((w) => !w.startsWith('-'))) {
      const bare = name.replace(/(?<=.)@[^/]*$/, '');
      if (!INSTALLABLE.has(bare)) bad.push(`${where}: npm install ${name}: not a keel package`);
    }
    return dir;
  }
  if (/^npx vitest\b/.test(command)) {
    for (const [, project] of command.matchAll(/--project[ =](\S+)/g)) {
      if (!PROJECTS.has(project!)) bad.push(`${where}: no vitest project "${project}"`);
    }
    for (const [, config] of command.matchAll(/--config[ =](\S+)/g)) {
      if (!exists(dir, config!)) bad.push(`${where}: no file ${config}`);
    }
    // Test files to run: the words that name a file (options and their values do not).
    for (const path of words.filter((w) => /\.test\.tsx?$/.test(w))) {
      if (!exists(dir, path)) bad.push(`${where}: no file ${path}`);
    }
    return dir;
  }
  // The script a runner is given: its first word that is not an option (nor an option's value).
  const runner = /^(sh|node|npx tsx)\s/.exec(command);
  if (runner) {
    const rest = words.slice(runner[1]!.split(' ').length);
    const file = rest.find((w, i) => !w.startsWith('-') && rest[i - 1] !== '--import');
    if (file !== undefined && /\.(?:sh|mjs|cjs|js|ts|tsx)$/.test(file) && !exists(dir, file)) {
      bad.push(`${where}: no file ${file}`);
    }
  }
  return dir;
}

/** A path as a README gives it: from the folder the command runs in, or from the root. */
function exists(dir: string, path: string): boolean {
  return existsSync(join(ROOT, dir, path)) || existsSync(join(ROOT, path));
}

function scriptsOf(dir: string): Record<string, string> {
  const file = join(dir, 'package.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')).scripts ?? {}) : {};
}
