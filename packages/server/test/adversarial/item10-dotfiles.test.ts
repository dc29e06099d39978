// Item 10: dotfiles under root (/.env, /.git/config) were served.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/index';
import { raw, start } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

let dir: string;
let root: string;
let app: App;
let port: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keel-dot-'));
  root = join(dir, 'public');
  mkdirSync(join(root, '.git'), { recursive: true });
  mkdirSync(join(root, 'sub'));
  writeFileSync(join(root, '.env'), 'SECRET=1');
  writeFileSync(join(root, '.git', 'config'), '[core]');
  writeFileSync(join(root, 'sub', '.hidden'), 'hidden');
  writeFileSync(join(root, 'index.html'), '<p>hi</p>');
  symlinkSync(join(root, '.git'), join(root, 'innocent'));
  app = createApp();
  app.onError(() => {});
  app.get('/ignore/*', (ctx) => ctx.sendFile(ctx.params['*'] ?? '', { root }));
  app.get('/deny/*', (ctx) => ctx.sendFile(ctx.params['*'] ?? '', { root, dotfiles: 'deny' }));
  app.get('/allow/*', (ctx) => ctx.sendFile(ctx.params['*'] ?? '', { root, dotfiles: 'allow' }));
  app.get('/ping', (ctx) => ctx.send('pong'));
  ({ port } = await start(app));
});

afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

const attacks = [
  '/.env',
  '/.git/config',
  '/sub/.hidden',
  '/%2eenv',
  '/.git%2fconfig',
  '/innocent/config',
];

describe('item 10: dotfiles', () => {
  it.each(attacks)('GET %s is 404 by default (ignore)', async (path) => {
    const res = await raw(port, { path: `/ignore${path}` });
    expect(res.status).toBe(404);
    expect(res.body).not.toContain('SECRET');
    expect((await raw(port, { path: '/ping' })).body).toBe('pong');
  });

  it.each(attacks)("GET %s is 403 with dotfiles: 'deny'", async (path) => {
    expect((await raw(port, { path: `/deny${path}` })).status).toBe(403);
  });

  it("serves them with dotfiles: 'allow', and ordinary files always", async () => {
    expect((await raw(port, { path: '/allow/.env' })).body).toBe('SECRET=1');
    expect((await raw(port, { path: '/allow/innocent/config' })).body).toBe('[core]');
    expect((await raw(port, { path: '/ignore/index.html' })).status).toBe(200);
  });
});
