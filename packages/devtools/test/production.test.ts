// @vitest-environment node
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/**
 * An app's production bundle (esbuild, minified, NODE_ENV=production as every bundler sets it)
 * of an entry that renders the panel from `entry`. React and the keel packages stay external:
 * what is measured is what the devtools add.
 */
async function bundle(entry: string, nodeEnv: string): Promise<string> {
  const result = await build({
    stdin: {
      contents: `import { KeelDevtools } from ${JSON.stringify(entry)};\nexport const app = KeelDevtools;\n`,
      resolveDir: source('.'),
      loader: 'ts',
    },
    bundle: true,
    minify: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': JSON.stringify(nodeEnv) },
    external: ['react', 'react/*', 'react-dom', '@keel/core', '@keel/react'],
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

// A string only the panel holds: its stylesheet's toggle rule.
const PANEL = 'kdt-toggle';

describe('production builds', () => {
  it('an app importing @keel/devtools ships no panel in production: the branch and its module are dropped', async () => {
    const production = await bundle(source('../src/index.ts'), 'production');
    expect(production).not.toContain(PANEL);
    expect(production).not.toContain('@keel/core');
    expect(production.length).toBeLessThan(200);
  });

  it('the same app in development has the panel', async () => {
    const development = await bundle(source('../src/index.ts'), 'development');
    expect(development).toContain(PANEL);
  });

  it('@keel/devtools/production ships the panel in production', async () => {
    const production = await bundle(source('../src/production.ts'), 'production');
    expect(production).toContain(PANEL);
  });
});
