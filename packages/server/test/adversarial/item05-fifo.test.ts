// Item 5: sendFile of a FIFO (or any non-regular file) under root used to open it first: each
// request parked a libuv worker in open(2), and four froze every later file operation.
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  constants,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/index';
import { raw, start } from '../helpers';
import { guardProcess, within } from './harness';

guardProcess();

let dir: string;
let root: string;
let app: App;
let port: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keel-fifo-'));
  root = join(dir, 'public');
  mkdirSync(root);
  writeFileSync(join(root, 'a.txt'), 'regular');
  execFileSync('mkfifo', [join(root, 'pipe')]);
  app = createApp();
  app.onError(() => {});
  app.get('/files/*', (ctx) => ctx.sendFile(ctx.params['*'] ?? '', { root }));
  app.get('/absolute-pipe', (ctx) => ctx.sendFile(join(root, 'pipe')));
  app.get('/dev-zero', (ctx) => ctx.sendFile('/dev/zero'));
  app.get('/ping', (ctx) => ctx.send('pong'));
  ({ port } = await start(app));
});

afterAll(async () => {
  // If a worker is still parked in open(2) on the FIFO, a writer releases it.
  for (let i = 0; i < 8; i++) {
    try {
      closeSync(openSync(join(root, 'pipe'), constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      break; // ENXIO: no reader is waiting
    }
  }
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('item 5: non-regular files are refused without a blocking open', () => {
  it('eight parallel requests for a FIFO get 404, and files are still served after', {
    timeout: 30_000,
  }, async () => {
    const attacks = await within(
      Promise.all(Array.from({ length: 8 }, () => raw(port, { path: '/files/pipe' }))),
    );
    expect(attacks.map((r) => r.status)).toEqual(Array(8).fill(404));
    expect((await within(raw(port, { path: '/absolute-pipe' }))).status).toBe(404);
    expect((await within(raw(port, { path: '/dev-zero' }))).status).toBe(404);
    const file = await within(raw(port, { path: '/files/a.txt' }));
    expect(file.status).toBe(200);
    expect(file.body).toBe('regular');
    expect((await raw(port, { path: '/ping' })).body).toBe('pong');
  });
});
