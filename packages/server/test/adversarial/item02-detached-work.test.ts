// Item 2: work the handler chain never observed (a next() neither returned nor awaited, a promise
// that answers after the request was over) must be caught and reported, never end the process.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { raw, until } from '../helpers';
import { type ServerProcess, spawnServer } from './harness';

let server: ServerProcess;
beforeAll(async () => {
  server = await spawnServer('faults');
});
afterAll(() => server.stop());

async function reported(): Promise<string[]> {
  return JSON.parse((await raw(server.port, { path: '/reported' })).body);
}

describe('item 2: detached work never crashes the server', () => {
  it('a middleware calling next() without awaiting it: the handler still answers', async () => {
    const res = await raw(server.port, { path: '/detached-next/ok' });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ late: true });
    await server.expectAlive();
  });

  it('... and when the detached handler fails, its error is the answer and is reported', async () => {
    const before = (await reported()).length;
    const res = await raw(server.port, { path: '/detached-next/throws' });
    expect(res.status).toBe(500);
    const teapot = await raw(server.port, { path: '/detached-next/http-error' });
    expect(teapot.status).toBe(418);
    await server.expectAlive();
    expect((await reported()).slice(before)).toEqual(['Error: late failure']);
  });

  it.each([
    ['/detached-promise', 500],
    ['/detached-async', 200],
    ['/detached-file', 200],
  ])('%s: a promise answering through ctx after the response is reported', async (path, status) => {
    const before = (await reported()).length;
    const res = await raw(server.port, { path });
    expect(res.status).toBe(status);
    await sleep(30);
    await until(() => server.stderr.length > 0 || server.exit !== null, 1).catch(() => {});
    await server.expectAlive();
    const late = (await reported()).slice(before);
    expect(late.some((m) => m.startsWith('ReleasedContextError'))).toBe(true);
  });
});
