import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './blocks';

/** The paths in the first column of the root README's Layout block, made absolute from the root. */
function layoutPaths(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Layout'));
  const start = section.indexOf('```text\n') + '```text\n'.length;
  const block = section.slice(start, section.indexOf('\n```', start));
  const paths: string[] = [];
  let top = '';
  for (const line of block.split('\n')) {
    const match = /^( *)(\S+)/.exec(line);
    if (!match || match[2]!.length === 0) continue;
    const [, indent, path] = match;
    // A continuation line (deeply indented) describes the line above.
    if (indent!.length > 2) continue;
    if (indent!.length === 0) top = path!;
    paths.push(indent!.length === 0 ? path! : join(top, path!));
  }
  return paths;
}

describe('the root README Layout matches the tree', () => {
  const paths = layoutPaths().map((p) => p.replace(/\/$/, ''));

  it('every path it names exists', () => {
    expect(paths.length).toBeGreaterThan(30);
    expect(paths.filter((p) => !existsSync(join(ROOT, p)))).toEqual([]);
  });

  it('it names every top-level entry git tracks', () => {
    const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
      .split('\n')
      .filter(Boolean);
    const top = new Set(tracked.map((f) => f.split('/')[0]!));
    for (const dir of ['packages', 'examples']) {
      top.delete(dir);
      for (const sub of readdirSync(join(ROOT, dir))) top.add(`${dir}/${sub}`);
    }
    const named = new Set(paths.map((p) => (p.startsWith('.ci/') ? '.ci' : p)));
    expect([...top].filter((entry) => !named.has(entry))).toEqual([]);
  });

  it("it names every folder of a package's src/", () => {
    const missing: string[] = [];
    for (const pkg of readdirSync(join(ROOT, 'packages'))) {
      const src = join(ROOT, 'packages', pkg, 'src');
      for (const entry of readdirSync(src, { withFileTypes: true })) {
        const path = `packages/${pkg}/src/${entry.name}`;
        if (entry.isDirectory() && !paths.includes(path)) missing.push(path);
      }
    }
    expect(missing).toEqual([]);
  });
});
