import { describe, expect, it } from 'vitest';
import { checkCommand } from './commands';

/** The problems `checkCommand` finds in one command run from `dir`. */
function problems(command: string, dir = '.'): string[] {
  const bad: string[] = [];
  checkCommand(command, dir, 'README.md', '10.34.8', bad);
  return bad;
}

describe('README command checker', () => {
  it('passes commands that work', () => {
    expect(problems('npx -y pnpm@10.34.8 demo')).toEqual([]);
    expect(
      problems('npx vitest run --project core packages/core/test/reentrant.fuzz.test.ts'),
    ).toEqual([]);
    expect(problems('FUZZ_SEED=1422 FUZZ_TRACE=1 npx vitest run --project core')).toEqual([]);
    expect(problems('npx tsx examples/node-demo/main.ts')).toEqual([]);
    expect(problems('node --expose-gc bench/client.bench.mjs')).toEqual([]);
    expect(problems('node --import tsx examples/node-demo/main.ts')).toEqual([]);
    expect(problems('sh scripts/ensure-chromium.sh', 'examples/react-live')).toEqual([]);
  });

  it('flags a pnpm script, project or file that does not exist', () => {
    expect(problems('npx -y pnpm@10.34.8 nope')).toHaveLength(1);
    expect(problems('npx -y pnpm@9.0.0 demo')).toHaveLength(1);
    expect(problems('npx vitest run --project nope')).toHaveLength(1);
    expect(problems('sh scripts/nope.sh')).toHaveLength(1);
  });

  it('checks a command behind environment variables as the same command', () => {
    expect(problems('KEEL_SOAK_MS=120000 npx -y pnpm@10.34.8 nope')).toHaveLength(1);
    expect(problems('FUZZ_COUNT=10 npx vitest run --project nope')).toHaveLength(1);
  });

  it('flags test files given to vitest that do not exist', () => {
    expect(problems('npx vitest run --project core packages/core/test/nope.test.ts')).toHaveLength(
      1,
    );
  });

  it('flags a missing script run by tsx or by node with any flags', () => {
    expect(problems('npx tsx examples/node-demo/nope.ts')).toHaveLength(1);
    expect(problems('node --expose-gc bench/nope.bench.mjs')).toHaveLength(1);
  });

  it('flags an npm install of a package keel neither publishes nor depends on', () => {
    expect(problems('npm install @keel/core @keel/react')).toEqual([]);
    expect(problems('npm install ioredis')).toEqual([]);
    expect(problems('npm install @keel/client')).toHaveLength(1);
    expect(problems('npm install @keel/core ioredi')).toHaveLength(1);
  });

  it('flags a cd into a folder that does not exist', () => {
    expect(problems('cd examples/nope')).toHaveLength(1);
  });
});
