import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

// ioredis is an optional peer dependency: only `@keel/server/redis` may load it.
const INDEX = new URL('../src/index.ts', import.meta.url).href;
const REDIS = new URL('../src/redis/index.ts', import.meta.url).href;
// A resolve hook that makes ioredis missing, as in an app that did not install it.
const HOOK = `export async function resolve(specifier, context, next) {
  if (specifier === 'ioredis' || specifier.startsWith('ioredis/')) {
    throw new Error("Cannot find package 'ioredis'");
  }
  return next(specifier, context);
}`;
const REGISTER = `import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(HOOK)}));`;

it('@keel/server runs without ioredis; only the /redis subpath needs it', () => {
  const script = `
    const { createApp, createEventHub } = await import(${JSON.stringify(INDEX)});
    const app = createApp();
    const hub = createEventHub();
    app.get('/events', (ctx) => hub.connect(ctx));
    const id = await hub.publish('x', 1);
    await hub.close();
    let redis = 'loaded';
    try { await import(${JSON.stringify(REDIS)}); } catch (e) { redis = String(e.message); }
    console.log(JSON.stringify({ id, redis }));`;
  const result = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--import',
      `data:text/javascript,${encodeURIComponent(REGISTER)}`,
      '--input-type=module',
      '--eval',
      script,
    ],
    { cwd: fileURLToPath(new URL('..', import.meta.url)), encoding: 'utf8', timeout: 30_000 },
  );
  expect(result.stderr).not.toMatch(/Error/);
  const out = JSON.parse(result.stdout.trim().split('\n').at(-1)!);
  expect(out.id).toMatch(/^[0-9a-f]{8}-1$/);
  expect(out.redis).toMatch(/Cannot find package 'ioredis'/);
}, 30_000);
