// Item 11: If-Range with a weak ETag or a date that is not Last-Modified must get the whole
// representation (200), RFC 9110 13.1.5; only a strong match gets 206.
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
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
const body = 'abcdefghijklmnopqrstuvwxyz';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keel-ifrange-'));
  writeFileSync(join(dir, 'f.txt'), body);
  const old = new Date('2024-01-02T03:04:05Z');
  utimesSync(join(dir, 'f.txt'), old, old);
  app = createApp();
  app.get('/f', (ctx) => ctx.sendFile('f.txt', { root: dir }));
  ({ port } = await start(app));
});

afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('item 11: If-Range', () => {
  it('a strong ETag that matches gets 206; its weak form gets 200', async () => {
    const first = await raw(port, { path: '/f' });
    const etag = first.headers.etag!;
    expect(etag.startsWith('W/')).toBe(false);
    const strong = await raw(port, {
      path: '/f',
      headers: { range: 'bytes=0-2', 'if-range': etag },
    });
    expect(strong.status).toBe(206);
    expect(strong.body).toBe('abc');
    const weak = await raw(port, {
      path: '/f',
      headers: { range: 'bytes=0-2', 'if-range': `W/${etag}` },
    });
    expect(weak.status).toBe(200);
    expect(weak.body).toBe(body);
    const other = await raw(port, {
      path: '/f',
      headers: { range: 'bytes=0-2', 'if-range': '"x"' },
    });
    expect(other.status).toBe(200);
  });

  it('a date gets 206 only when it is exactly Last-Modified', async () => {
    const lastModified = (await raw(port, { path: '/f' })).headers['last-modified']!;
    const exact = await raw(port, {
      path: '/f',
      headers: { range: 'bytes=1-2', 'if-range': lastModified },
    });
    expect(exact.status).toBe(206);
    expect(exact.body).toBe('bc');
    for (const date of [
      'Wed, 01 Jan 2025 00:00:00 GMT',
      'Mon, 01 Jan 2024 00:00:00 GMT',
      'nonsense',
    ]) {
      const res = await raw(port, {
        path: '/f',
        headers: { range: 'bytes=1-2', 'if-range': date },
      });
      expect(res.status).toBe(200);
      expect(res.body).toBe(body);
    }
  });
});
