// `sendFile(path, { root: process.env.PUBLIC_DIR ?? '' })` with the variable unset served files
// from process.cwd() (`resolve('')` is the working directory): the app's package.json, its
// sources, through a route meant for one folder. An empty root, or one with a NUL byte (which
// reached realpath and came back as Node's bare "argument 'path'" TypeError), is a RangeError
// naming `sendFile root`, before the disk is touched.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
  dir = mkdtempSync(join(tmpdir(), 'keel-root-'));
  writeFileSync(join(dir, 'a.txt'), 'hello');
  app = createApp();
  // The rejection as the handler caught it: its class and message.
  app.get('/r', async (ctx) => {
    try {
      await ctx.sendFile(ctx.query('p') ?? '', { root: ctx.query('root') });
    } catch (err) {
      const { name, message } = err as Error;
      return ctx.status(500).json({ name, message });
    }
  });
  ({ port } = await start(app));
});

afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

const get = (path: string, root: string) =>
  raw(port, { path: `/r?p=${encodeURIComponent(path)}&root=${encodeURIComponent(root)}` });

describe('sendFile root must name a directory', () => {
  it.each([
    ['', '""'],
    [`${'/tmp'}\0`, '"/tmp\\u0000"'],
  ])('root %j: a RangeError naming it, nothing served', async (root, shown) => {
    const res = await get('package.json', root);
    expect(res.status).toBe(500);
    expect(JSON.parse(res.body)).toEqual({
      name: 'RangeError',
      message: `keel: \`sendFile root\` must be a directory path (not empty, no NUL byte), got ${shown}`,
    });
  });

  it('a root given serves from it', async () => {
    const res = await get('a.txt', dir);
    expect([res.status, res.body]).toEqual([200, 'hello']);
  });
});
