// A second response operation while an async one (sendFile, graphql) was still looking up its
// answer passed the "answers once" check: the two raced, the client got whichever wrote first,
// and the other was dropped without a word (it found the response finished and took that for a
// client that left). The async one started first now answers; the second throws at once.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appStats } from '../../src/app';
import { type App, createApp } from '../../src/index';
import { raw, start } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

let dir: string;
let app: App;
let port: number;
const errors: string[] = [];
const schema = 'type Query { a: Int }';
const resolvers = { Query: { a: () => 1 } };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keel-double-'));
  writeFileSync(join(dir, 'a.txt'), 'first');
  writeFileSync(join(dir, 'b.txt'), 'second');
  app = createApp();
  app.onError((err) => {
    errors.push((err as Error).message);
  });
  app.get('/file-file', (ctx) => {
    void ctx.sendFile('a.txt', { root: dir });
    return ctx.sendFile('b.txt', { root: dir });
  });
  app.get('/file-json', (ctx) => {
    void ctx.sendFile('a.txt', { root: dir });
    ctx.json({ second: true });
  });
  app.get('/graphql-file', (ctx) => {
    void ctx.graphql(schema, resolvers);
    return ctx.sendFile('b.txt', { root: dir });
  });
  // A failed lookup is over before the handler hears of it: a fallback answer is no second one.
  app.get('/fallback', async (ctx) => {
    try {
      await ctx.sendFile('missing.txt', { root: dir });
    } catch {
      ctx.json({ fallback: true });
    }
  });
  app.get('/ok', (ctx) => ctx.json({ ok: true }));
  ({ port } = await start(app));
});

afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

async function settled(): Promise<void> {
  for (let i = 0; i < 50 && appStats(app).inflight > 0; i++) await sleep(5);
  expect(appStats(app).inflight).toBe(0);
}

describe('a second response operation while an async one is still under way', () => {
  it.each([
    ['/file-file', 'first'],
    ['/file-json', 'first'],
    ['/graphql-file?query=%7Ba%7D', '{"data":{"a":1}}'],
  ])('%s: the first answers, the second throws and is reported', async (path, body) => {
    errors.length = 0;
    for (let i = 0; i < 5; i++) {
      const res = await raw(port, { path });
      expect(res.status).toBe(200);
      expect(res.body).toBe(body);
      await settled();
    }
    expect(errors).toEqual(Array(5).fill('keel: a response was already sent for this request'));
    expect((await raw(port, { path: '/ok' })).body).toBe('{"ok":true}');
  });

  it('an awaited sendFile that failed leaves the response open for a fallback', async () => {
    errors.length = 0;
    const res = await raw(port, { path: '/fallback' });
    expect(res.body).toBe('{"fallback":true}');
    await settled();
    expect(errors).toEqual([]);
  });
});
