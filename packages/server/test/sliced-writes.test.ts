import { type ClientRequest, type IncomingMessage, request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { appStats } from '../src/app';
import { SLICE_BYTES, sliceWrites } from '../src/sliced-body';
import { start, trackApps, until } from './helpers';

// `sliceWrites` stands in for `res.write` while a stream is sent: a write's callback (Node calls
// it once that chunk is flushed, or with the error that stopped it) must not be lost because
// the chunk was big enough to be written in slices, or queued behind one that was.

const app = trackApps();
const closers: { destroy(): void }[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c.destroy();
});

function get(port: number, path: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req: ClientRequest = request({ host: '127.0.0.1', port, path, agent: false });
    closers.push(req);
    req.on('response', resolve);
    req.on('error', reject);
    req.end();
  });
}

type Call = { name: string; error: string | null };

describe('sliceWrites: write callbacks', () => {
  // More than loopback's kernel buffers hold, so a client that reads nothing leaves most of it
  // unwritten; not a multiple of a slice.
  const BIG = 128 * SLICE_BYTES + 100;

  function setup() {
    const a = app();
    const calls: Call[] = [];
    let restored = false;
    const record =
      (name: string) =>
      (error?: Error | null): void => {
        calls.push({
          name,
          error: error ? ((error as { code?: string }).code ?? error.message) : null,
        });
      };
    a.get('/w', (ctx) => {
      const res = ctx.res;
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const restore = sliceWrites(res);
      res.on('close', () => {
        restore();
        restored = true;
      });
      res.write(Buffer.alloc(BIG, 1), record('big bytes'));
      res.write('small', record('small queued'));
      res.write('b'.repeat(BIG), 'latin1', record('big string'));
      res.end(record('end'));
    });
    return { a, calls, restored: () => restored };
  }

  it('each is called once its chunk is written, in order', async () => {
    const { a, calls } = setup();
    const { port } = await start(a);
    const res = await get(port, '/w');
    let got = 0;
    res.on('data', (chunk: Buffer) => {
      got += chunk.byteLength;
    });
    await new Promise((resolve) => res.on('end', resolve));
    expect(got).toBe(2 * BIG + 5);
    await until(() => calls.length === 4);
    expect(calls.map((c) => [c.name, c.error])).toEqual([
      ['big bytes', null],
      ['small queued', null],
      ['big string', null],
      ['end', null],
    ]);
    await until(() => appStats(a).inflight === 0);
  });

  it('each gets an error when the response closes before its chunk is written', async () => {
    const { a, calls, restored } = setup();
    const { port } = await start(a);
    const res = await get(port, '/w');
    res.on('error', () => {});
    // The client reads nothing and leaves.
    res.destroy();
    await until(restored);
    await until(() => calls.length === 4);
    expect(calls.map((c) => c.name)).toEqual(['big bytes', 'small queued', 'big string', 'end']);
    for (const call of calls) expect(call.error).toBe('ERR_STREAM_DESTROYED');
    await until(() => appStats(a).inflight === 0);
  });
});
