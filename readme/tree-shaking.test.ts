import { describe, expect, it } from 'vitest';
import { APPS, appCode, bundleSize, keelSources } from '../scripts/size-budget.mjs';

/** The source modules (paths from packages/) an app's bundle takes code from. */
async function modulesOf(id: string): Promise<string[]> {
  const app = APPS.find((a) => a.id === id)!;
  const { modules } = await bundleSize(appCode(app.readme, id), { plugins: [keelSources] });
  return modules.map((path) => path.replace(/^.*packages\//, ''));
}

const has = (modules: string[], prefix: string) => modules.some((m) => m.startsWith(prefix));

// What the size budget measures in bytes, here by module: an app carries the code of the
// features it uses and no other (the budget alone would let a small leak through).
describe('tree-shaking: each README app bundles only what it uses', () => {
  it('A (intelligence + circuit breaker): no scheduler, no adaptive engine', async () => {
    const modules = await modulesOf('A');
    expect(has(modules, 'core/src/intelligence/intelligence')).toBe(true);
    expect(has(modules, 'core/src/circuit/breaker')).toBe(true);
    expect(has(modules, 'core/src/scheduler/scheduler')).toBe(false);
    expect(has(modules, 'core/src/scheduler/lanes')).toBe(false);
    expect(has(modules, 'core/src/adaptive/')).toBe(false);
    expect(has(modules, 'core/src/create-client')).toBe(false);
  });

  it('B (no feature): no intelligence, circuit breaker, scheduler or adaptive engine', async () => {
    const modules = await modulesOf('B');
    for (const prefix of [
      'core/src/intelligence/intelligence',
      'core/src/intelligence/endpoint-record',
      'core/src/circuit/breaker',
      'core/src/scheduler/scheduler',
      'core/src/adaptive/',
      'core/src/hydration',
      // The public Deduper: the client keeps its in-flight reads in a plain Map.
      'core/src/dedup/deduper',
      // Only the breaker makes one: the client and the retry policy ask its guard, by its brand.
      'core/src/errors/circuit-open-error',
    ]) {
      expect(has(modules, prefix), prefix).toBe(false);
    }
  });

  it('C (createClient): every feature', async () => {
    const modules = await modulesOf('C');
    for (const prefix of [
      'core/src/intelligence/intelligence',
      'core/src/circuit/breaker',
      'core/src/scheduler/scheduler',
      'core/src/adaptive/engine',
    ]) {
      expect(has(modules, prefix), prefix).toBe(true);
    }
  });

  it('D (React): the hooks it uses, none of the others, and no scheduler or adaptive engine', async () => {
    const modules = await modulesOf('D');
    expect(has(modules, 'react/src/use-query')).toBe(true);
    expect(has(modules, 'react/src/use-server-events')).toBe(true);
    for (const prefix of [
      'core/src/scheduler/scheduler',
      'core/src/adaptive/',
      'core/src/create-client',
      'core/src/hydration',
      'react/src/hydration-boundary',
      'react/src/infinite/',
      'react/src/use-infinite-query',
      'react/src/use-queries',
      'react/src/query-error-boundary',
      'react/src/use-is-fetching',
    ]) {
      expect(has(modules, prefix), prefix).toBe(false);
    }
  });
});
