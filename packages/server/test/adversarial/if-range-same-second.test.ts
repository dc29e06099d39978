// RFC 9110 §13.1.5 (and §8.8.2.2): a Last-Modified date is a strong validator only when it is
// at least one second before the response's Date. A file written within the second it is served
// may be written again in that same second, with the same date: If-Range with that date must get
// the whole file (200), not a range of bytes that may belong to another version. The app's clock
// stands for "now", so the second boundary is set by the test, not by timing luck.
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/index';
import { ManualClock, raw, start } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

let dir: string;
let app: App;
let port: number;
const clock = new ManualClock();
const body = 'abcdefghijklmnopqrstuvwxyz';
const modified = Date.parse('2024-01-02T03:04:05.300Z');
const lastModified = 'Tue, 02 Jan 2024 03:04:05 GMT';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keel-ifrange-now-'));
  writeFileSync(join(dir, 'f.txt'), body);
  utimesSync(join(dir, 'f.txt'), modified / 1000, modified / 1000);
  app = createApp({ clock });
  app.get('/f', (ctx) => ctx.sendFile('f.txt', { root: dir }));
  ({ port } = await start(app));
});

afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

function ranged() {
  return raw(port, { path: '/f', headers: { range: 'bytes=1-2', 'if-range': lastModified } });
}

describe('If-Range with the Last-Modified date of a file modified this second', () => {
  it('sends the whole file (200): the date is no strong validator yet', async () => {
    clock.time = modified + 600; // 03:04:05.900, the second the file was written
    const res = await ranged();
    expect(res.headers['last-modified']).toBe(lastModified);
    expect(res.status).toBe(200);
    expect(res.body).toBe(body);
  });

  it('sends the whole file (200) for a file dated in the future (a clock behind the disk)', async () => {
    clock.time = modified - 5_000;
    expect((await ranged()).status).toBe(200);
  });

  it('sends the range (206) once the date is a second old', async () => {
    clock.time = Date.parse('2024-01-02T03:04:06.000Z');
    const res = await ranged();
    expect(res.status).toBe(206);
    expect(res.body).toBe('bc');
  });
});
