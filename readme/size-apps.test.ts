import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { APPS, appCode } from '../scripts/size-budget.mjs';
import { blocksOf, READMES, ROOT } from './blocks';

// The size budget (scripts/size-budget.mjs, run by `test:pkg`) bundles README blocks tagged
// `size=<id>`: these checks keep the apps it measures the ones the READMEs show, compiled and
// run like every other block.
describe('the size budget apps are README blocks', () => {
  it('each of A-D is exactly one block, and the script reads the same code', () => {
    expect(APPS.map((a) => a.id)).toEqual(['A', 'B', 'C', 'D']);
    for (const app of APPS) {
      const tagged = READMES.flatMap(blocksOf).filter((b) => b.meta.includes(`size=${app.id}`));
      expect(
        tagged.map((b) => b.readme),
        app.id,
      ).toEqual([app.readme]);
      expect(appCode(app.readme, app.id)).toBe(`${tagged[0]!.code}\n`);
      // Run too (readme/run.test.tsx): a size app that does not work would measure nothing.
      expect(tagged[0]!.meta, app.id).toContain('run');
    }
  });

  it('a README without the block, or with two, fails loudly instead of measuring nothing', () => {
    expect(() => appCode('packages/server/README.md', 'A')).toThrow(/found 0/);
  });

  it('the targets are the issue #15 ones', () => {
    const kb = 1024;
    expect(APPS.map((a) => a.target)).toEqual([10 * kb, 6 * kb, 17 * kb, 12 * kb]);
  });
});

describe("the core README's size table", () => {
  it('states each app’s budget and target as the check has them', () => {
    const text = readFileSync(join(ROOT, 'packages/core/README.md'), 'utf8');
    for (const app of APPS) {
      // | A: ... | 49.8 KB | 18.0 KB | 18.0 KB | 10 KB |: budget and target are the last two.
      const row = text.split('\n').find((l) => l.startsWith(`| ${app.id}: `));
      expect(row, `a row for app ${app.id}`).toBeDefined();
      const cells = row!
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim());
      const kb = (cell: string) => Number(cell.replace(/ KB$/, '')) * 1024;
      expect(kb(cells.at(-2)!), `${app.id} budget`).toBeCloseTo(app.budget, 0);
      expect(kb(cells.at(-1)!), `${app.id} target`).toBeCloseTo(app.target, 0);
    }
  });
});
