// A handler is app code, and app code returns and throws odd things: a thenable whose `then`
// throws, a `then` getter that throws, a thenable that settles twice, a revoked Proxy as the
// error. Each must be that request's failure (a 500, reported), never the process's end and never
// an answer to another client's request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { raw, sse } from '../helpers';
import { type ServerProcess, spawnServer, within } from './harness';

describe.each([
  ['without middleware', '0'],
  ['behind a middleware returning next()', '1'],
])('a handler returning or throwing odd values, %s', (_name, middleware) => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await spawnServer('odd-returns', { KEEL_MIDDLEWARE: middleware });
  });
  afterAll(() => server.stop());

  async function reported(): Promise<string[]> {
    return JSON.parse((await raw(server.port, { path: '/reported' })).body);
  }

  it.each([
    ['/then-throws', 'Error: then threw'],
    ['/then-getter-throws', 'Error: then getter threw'],
    ['/throw-revoked', 'unreadable'],
    ['/throw-revoked-async', 'unreadable'],
  ])('%s: a 500 for that request, reported, and the process goes on', async (path, report) => {
    const before = (await reported()).length;
    const res = await within(raw(server.port, { path }), 4_000, `GET ${path}`);
    expect(res.status).toBe(500);
    expect(JSON.parse(res.body)).toEqual({ status: 500, error: 'Internal Server Error' });
    await server.expectAlive();
    expect((await reported()).slice(before)).toContain(report);
  });

  it.each(['/settles-twice'])(
    '%s: a late second settle is ignored, as await would, and never answers the next request',
    async (path) => {
      const first = raw(server.port, { path });
      // Waits for the first to be answered, so its pooled slot is idle for the victim to take.
      expect((await first).status).toBe(200);
      const victims = await Promise.all(
        Array.from({ length: 4 }, () => raw(server.port, { path: '/victim' })),
      );
      for (const victim of victims) {
        expect(victim.status).toBe(200);
        expect(JSON.parse(victim.body)).toEqual({ victim: true });
      }
      await server.expectAlive();
    },
  );

  it.each([
    ['then-throws', 'Error: then threw'],
    ['then-getter-throws', 'Error: then getter threw'],
  ])(
    'sseInterval fn returning a value whose %s: the stream ends, reported',
    async (kind, report) => {
      const before = (await reported()).length;
      const client = await sse(server.port, `/sse/${kind}`);
      await within(client.ended, 4_000, 'the stream end');
      expect(client.events.map((e) => e.data)).toEqual(['{"tick":1}']);
      await server.expectAlive();
      expect((await reported()).slice(before)).toContain(report);
    },
  );
});
