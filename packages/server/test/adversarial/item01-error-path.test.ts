// Item 1: a header value Node refuses, in an HttpException's headers, must not take the process down.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { raw } from '../helpers';
import { type ServerProcess, spawnServer } from './harness';

let server: ServerProcess;
beforeAll(async () => {
  server = await spawnServer('faults');
});
afterAll(() => server.stop());

describe('item 1: the error path never throws', () => {
  it.each([
    ['/bad-header/sync', 'CR/LF in a value, thrown synchronously'],
    ['/bad-header/async', 'an undefined value, thrown from an async handler'],
    ['/bad-header/name', 'an invalid header name'],
  ])('%s (%s): a bare 500, reported, and the next request is answered', async (path) => {
    const res = await raw(server.port, { path });
    expect(res.status).toBe(500);
    expect(JSON.parse(res.body)).toEqual({ status: 500, error: 'Internal Server Error' });
    expect(res.headers['x-injected']).toBeUndefined();
    await server.expectAlive();
    const reported = JSON.parse((await raw(server.port, { path: '/reported' })).body);
    expect(reported.join('\n')).toMatch(/header/i);
  });

  it('ends the socket when the headers were already out', async () => {
    const res = await raw(server.port, { path: '/bad-header/partial' }).catch((e: Error) => e);
    // Either the truncated body arrives or the connection is cut: both end the exchange.
    if (!(res instanceof Error)) expect(res.body).toBe('partial');
    await server.expectAlive();
  });
});
