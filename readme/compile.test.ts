import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { blocksOf, isCode, moduleOf, READMES, ROOT, slugOf } from './blocks';

/** Where the modules made from the blocks are written (ignored by git). */
const GENERATED = join(import.meta.dirname, '.generated', 'compile');

const OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
  strict: true,
  noUncheckedIndexedAccess: true,
  jsx: ts.JsxEmit.ReactJSX,
  skipLibCheck: true,
  noEmit: true,
  types: ['node'],
  baseUrl: ROOT,
  paths: {
    '@keel/core': ['packages/core/src/index.ts'],
    '@keel/core/internals': ['packages/core/src/internals.ts'],
    '@keel/react': ['packages/react/src/index.ts'],
    '@keel/server': ['packages/server/src/index.ts'],
    '@keel/server/*': ['packages/server/src/*'],
    '@keel/devtools': ['packages/devtools/src/index.ts'],
    '@keel/devtools/production': ['packages/devtools/src/production.ts'],
  },
  typeRoots: [join(ROOT, 'node_modules/@types')],
};

describe('README code blocks compile', () => {
  it('with tsc --strict against the workspace packages', () => {
    rmSync(GENERATED, { recursive: true, force: true });
    mkdirSync(GENERATED, { recursive: true });
    const modules = READMES.flatMap((readme) => {
      const blocks = blocksOf(readme);
      const context = blocks.find((b) => b.context);
      return blocks.filter(isCode).map((block, i) => moduleOf(block, context, i));
    });
    expect(modules.length).toBeGreaterThan(10);
    const files = modules.map((m) => {
      const file = join(GENERATED, m.name);
      writeFileSync(file, m.source);
      return file;
    });
    const program = ts.createProgram(files, OPTIONS);
    const problems: string[] = [];
    for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
      const file = diagnostic.file;
      const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
      const mod = file && modules.find((m) => join(GENERATED, m.name) === file.fileName);
      if (file === undefined || mod === undefined) {
        problems.push(`${file?.fileName ?? '(global)'}: TS${diagnostic.code} ${message}`);
        continue;
      }
      const line = file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1;
      const where =
        line >= mod.firstLine
          ? `${mod.block.readme}:${mod.block.line + line - mod.firstLine}`
          : `${mod.block.readme}:${mod.block.line} (in the hoisted imports, declarations or context: line ${line} of readme/.generated/${mod.name})`;
      problems.push(`${where}: TS${diagnostic.code} ${message}`);
    }
    expect(problems).toEqual([]);
  });

  it('JSON blocks parse', () => {
    for (const readme of READMES) {
      for (const block of blocksOf(readme).filter((b) => b.lang === 'json')) {
        expect(() => JSON.parse(block.code), `${readme}:${block.line}`).not.toThrow();
      }
    }
  });
});

describe('README links', () => {
  const published = READMES.filter((r) => r.startsWith('packages/'));

  it.each(published)('%s: links work on npm (absolute, or an anchor of the page)', (readme) => {
    const text = readFileSync(join(ROOT, readme), 'utf8');
    const slugs = new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => slugOf(m[1]!)));
    const bad: string[] = [];
    for (const [, target] of withoutCode(text).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^https?:\/\//.test(target!)) continue;
      if (target!.startsWith('#') && slugs.has(target!.slice(1))) continue;
      bad.push(target!);
    }
    expect(bad).toEqual([]);
  });

  it('the root README: relative links point at files that exist', () => {
    const text = withoutCode(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    for (const [, target] of text.matchAll(/\]\(([^)\s#]+)(#[^)]*)?\)/g)) {
      if (/^https?:\/\//.test(target!)) continue;
      expect(existsSync(join(ROOT, target!)), target).toBe(true);
    }
  });
});

describe('README commands', () => {
  const pnpm = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
    .packageManager as string;
  const version = pnpm.split('@')[1]!;
  const readmes = [
    'README.md',
    ...READMES.slice(1),
    'examples/react-live/README.md',
    'examples/node-demo/README.md',
    'packages/server/test/README.md',
  ];

  it.each(readmes)(
    '%s: pnpm commands use the pinned version and name scripts that exist',
    (readme) => {
      const bad: string[] = [];
      for (const block of blocksOf(readme).filter((b) => b.lang === 'sh')) {
        let dir = dirname(readme);
        for (const command of block.code.split(/\n|&&/).map((c) => c.replace(/#.*$/, '').trim())) {
          dir = checkCommand(command, dir, `${readme}:${block.line}`, version, bad);
        }
      }
      expect(bad).toEqual([]);
    },
  );

  it.each(readmes)(
    '%s: commands in the text (pnpm scripts, vitest projects, sh and node paths) exist too',
    (readme) => {
      const bad: string[] = [];
      // A paragraph's `cd dir && ...` holds for the commands after it in that paragraph.
      for (const paragraph of withoutCode(readFileSync(join(ROOT, readme), 'utf8')).split(
        /\n\s*\n/,
      )) {
        let dir = dirname(readme);
        for (const [, span] of paragraph.matchAll(/`([^`\n]+)`/g)) {
          // A command, not a pattern of one (`npx -y pnpm@<version> <script>`).
          if (!/^(cd |npx |pnpm |sh |node )/.test(span!) || /<|\.\.\./.test(span!)) continue;
          for (const command of span!.split('&&').map((c) => c.trim())) {
            dir = checkCommand(command, dir, `${readme}: \`${span}\``, version, bad);
          }
        }
      }
      expect(bad).toEqual([]);
    },
  );
});

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
 * Checks one shell command run in `dir` (relative to the root); returns the folder the next
 * command runs in (`cd` paths are from the root, as the READMEs write them). pnpm: the pinned version, and a script that exists where it runs (the root's
 * scripts count everywhere: the READMEs say to run them from the root); `--filter <package>
 * <script>`: a script of that package; vitest `--project`: a project that exists; `--config`,
 * `sh` and `node` paths: files that exist.
 */
function checkCommand(
  command: string,
  dir: string,
  where: string,
  version: string,
  bad: string[],
): string {
  const cd = /^cd\s+(\S+)/.exec(command);
  // The READMEs write `cd` from the repository root ("From the repository root: cd examples/x").
  if (cd) return cd[1]!;
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
  if (/^npx vitest\b/.test(command)) {
    for (const [, project] of command.matchAll(/--project[ =](\S+)/g)) {
      if (!PROJECTS.has(project!)) bad.push(`${where}: no vitest project "${project}"`);
    }
    for (const [, config] of command.matchAll(/--config[ =](\S+)/g)) {
      if (!exists(dir, config!)) bad.push(`${where}: no file ${config}`);
    }
    return dir;
  }
  const file = /^(?:sh|node(?: --import \S+)?)\s+(\S+\.(?:sh|mjs|js|ts))\b/.exec(command);
  if (file && !exists(dir, file[1]!)) bad.push(`${where}: no file ${file[1]}`);
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

/** The text outside fenced code blocks (links in code are code). */
function withoutCode(text: string): string {
  return text.replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1\s*$/gm, '');
}
