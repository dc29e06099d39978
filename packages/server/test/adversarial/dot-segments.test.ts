// `./a.txt` under a root was refused as a dotfile: the `.` segment (the current directory) was
// taken for a hidden name. send / serve-static normalize first and serve it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
  dir = mkdtempSync(join(tmpdir(), 'keel-dotseg-'));
  root = join(dir, 'public');
  mkdirSync(join(root, 'sub'), { recursive: true });
  writeFileSync(join(root, 'a.txt'), 'hello');
  writeFileSync(join(root, 'sub', 'b.txt'), 'bee');
  writeFileSync(join(root, '.env'), 'SECRET=1');
  app = createApp();
  app.onError(() => {});
  app.get('/given', (ctx) => ctx.sendFile(ctx.query('p') ?? '', { root }));
  app.get('/deny', (ctx) => ctx.sendFile(ctx.query('p') ?? '', { root, dotfiles: 'deny' }));
  ({ port } = await start(app));
});

afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('sendFile: `.` segments are the current directory, not dotfiles', () => {
  it.each([
    ['./a.txt', 'hello'],
    ['sub/./b.txt', 'bee'],
    ['./sub/b.txt', 'bee'],
    ['.', null],
  ])('%s', async (path, body) => {
    const res = await raw(port, { path: `/deny?p=${encodeURIComponent(path)}` });
    if (body === null) {
      expect(res.status).toBe(404); // the root itself is a directory
    } else {
      expect(res.status).toBe(200);
      expect(res.body).toBe(body);
    }
  });

  it.each(['./.env', 'sub/../.env', '.env/.', 'sub/./.env'])(
    'a real dotfile behind `.` segments is still refused: %s',
    async (path) => {
      const ignore = await raw(port, { path: `/given?p=${encodeURIComponent(path)}` });
      expect([403, 404]).toContain(ignore.status);
      expect(ignore.body).not.toContain('SECRET');
      const deny = await raw(port, { path: `/deny?p=${encodeURIComponent(path)}` });
      expect(deny.status).toBe(403);
    },
  );
});
