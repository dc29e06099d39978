// The SSE test clients' `waitFor(n)` had no bound: an event that never came showed as the test's
// own timeout (30 s in the Redis chaos tests) with no word of what was missing. It now rejects
// after a bound (10 s unless given), naming the path and the events received so far.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../src/index';
import { openSse } from './blackbox/helpers';
import { sse, start } from './helpers';

let app: App;
let port: number;

beforeAll(async () => {
  app = createApp();
  // One event, then the stream stays open: a second never comes.
  app.get('/one', (ctx) => {
    ctx.sseEvent('only', 'first');
  });
  ({ port } = await start(app));
});

afterAll(() => app.close({ timeoutMs: 1000 }));

describe('the SSE test clients wait for events within a bound', () => {
  it('sse(): waitFor rejects naming what came, and resolves when enough came', async () => {
    const client = await sse(port, '/one');
    try {
      await client.waitFor(1, 2_000);
      const error = await client.waitFor(2, 50).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toMatch(/2 events on :\d+\/one within 50 ms; got 1: /);
      expect((error as Error).message).toContain('"data":"first"');
    } finally {
      client.close();
    }
  });

  it('openSse(): waitFor rejects naming what came, and resolves when enough came', async () => {
    const client = await openSse(port, '/one');
    try {
      expect(await client.waitFor(1, 2_000)).toHaveLength(1);
      const error = await client.waitFor(2, 50).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toMatch(/2 events on :\d+\/one within 50 ms; got 1: /);
      expect((error as Error).message).toContain('"data":"first"');
    } finally {
      client.close();
    }
  });
});
