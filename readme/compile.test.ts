import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
  const version = pnpm.split('@')[1];

  it.each([
    'README.md',
    ...READMES.slice(1),
    'examples/react-live/README.md',
    'examples/node-demo/README.md',
  ])('%s: pnpm commands use the pinned version and name scripts that exist', (readme) => {
    const bad: string[] = [];
    for (const block of blocksOf(readme).filter((b) => b.lang === 'sh')) {
      let dir = dirname(readme);
      for (const command of block.code.split(/\n|&&/).map((c) => c.replace(/#.*$/, '').trim())) {
        const cd = /^cd\s+(\S+)/.exec(command);
        if (cd) dir = cd[1]!;
        const run = /npx -y pnpm@(\S+)\s+(\S+)/.exec(command);
        if (run === null) continue;
        if (run[1] !== version)
          bad.push(`${readme}:${block.line}: pnpm@${run[1]} (pinned: ${version})`);
        const script = run[2]!;
        if (['install', 'exec', 'add', 'run', '--filter', '-r'].includes(script)) continue;
        const scripts = {
          ...scriptsOf(join(ROOT, dir)),
          ...(dir === '.' ? {} : scriptsOf(ROOT)),
        };
        if (!(script in scripts))
          bad.push(`${readme}:${block.line}: no script "${script}" in ${dir}`);
      }
    }
    expect(bad).toEqual([]);
  });
});

function scriptsOf(dir: string): Record<string, string> {
  const file = join(dir, 'package.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')).scripts ?? {}) : {};
}

/** The text outside fenced code blocks (links in code are code). */
function withoutCode(text: string): string {
  return text.replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1\s*$/gm, '');
}
