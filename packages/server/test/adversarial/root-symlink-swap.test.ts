// `sendFile(name, { root })` kept the root's real path from its first request for the life of
// the process. Deploying static files by swapping a symlink (`ln -sfn release-2 current`, as
// Capistrano and most static deploys do) left the app serving the old release, and once the
// old release was removed every file was 404 until a restart.
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/index';
import { raw, start } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

let dir: string;
let app: App;
let port: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keel-swap-'));
  for (const release of ['r1', 'r2']) {
    mkdirSync(join(dir, release));
    writeFileSync(join(dir, release, 'index.html'), `release ${release}`);
  }
  symlinkSync(join(dir, 'r1'), join(dir, 'current'));
  const root = join(dir, 'current');
  app = createApp();
  app.onError(() => {});
  app.get('/*', (ctx) => ctx.sendFile(ctx.params['*'] ?? '', { root }));
  ({ port } = await start(app));
});

afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `ln -sfn r2 current`, atomically (a new link renamed over the old). */
function swapTo(release: string): void {
  symlinkSync(join(dir, release), join(dir, 'next'));
  renameSync(join(dir, 'next'), join(dir, 'current'));
}

describe('a root that is a symlink', () => {
  it('serves the release the link points to now', async () => {
    expect((await raw(port, { path: '/index.html' })).body).toBe('release r1');
    swapTo('r2');
    const res = await raw(port, { path: '/index.html' });
    expect(res.status).toBe(200);
    expect(res.body).toBe('release r2');
    rmSync(join(dir, 'r1'), { recursive: true });
    expect((await raw(port, { path: '/index.html' })).body).toBe('release r2');
  });

  it('still refuses what leaves the new root', async () => {
    writeFileSync(join(dir, 'secret.txt'), 'SECRET');
    symlinkSync(join(dir, 'secret.txt'), join(dir, 'r2', 'leak.txt'));
    const res = await raw(port, { path: '/leak.txt' });
    expect(res.status).toBe(403);
    expect(res.body).not.toContain('SECRET');
  });
});
