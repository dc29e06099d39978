import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { blocksOf, isCode, moduleOf, READMES, ROOT, slugOf } from './blocks';
import { checkCommand } from './commands';

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

/** Fence languages of shell commands. */
const SHELL = new Set(['sh', 'bash', 'shell', 'console']);

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
      for (const block of blocksOf(readme).filter((b) => SHELL.has(b.lang))) {
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
          if (
            !/^(?:\w+=\S*\s+)*(cd |npx |npm |pnpm |sh |node )/.test(span!) ||
            /<|\.\.\./.test(span!)
          )
            continue;
          for (const command of span!.split('&&').map((c) => c.trim())) {
            dir = checkCommand(command, dir, `${readme}: \`${span}\``, version, bad);
          }
        }
      }
      expect(bad).toEqual([]);
    },
  );
});

/** The text outside fenced code blocks (links in code are code). */
function withoutCode(text: string): string {
  return text.replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1\s*$/gm, '');
}
