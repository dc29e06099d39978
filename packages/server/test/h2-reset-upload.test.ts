// An upload on an attached HTTP/2 server that the client resets (RST_STREAM CANCEL) mid-body,
// before END_STREAM, with no Content-Length (END_STREAM frames the body on h2): the handler must
// not get the cut body as if whole (a parsed `[1,2,3]` of a longer array), and a `for await`
// over ctx.req must see an abort, as on HTTP/1. Raw frames: Node's own client sends END_STREAM
// before its reset (`close()` ends the body first), and such a body is whole by the protocol.
import { constants, createServer as createHttp2Server } from 'node:http2';
import { type AddressInfo, connect as netConnect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { appStats } from '../src/app';
import { createApp } from '../src/index';
import { h2Fixture } from './h2-helpers';
import { until } from './helpers';

const { apps } = h2Fixture();

/** One HTTP/2 frame: type, flags, stream id, payload. */
function frame(type: number, flags: number, id: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(id, 5);
  return Buffer.concat([head, payload]);
}

/** HPACK: each header a literal without indexing, new name, no Huffman (names and values < 127). */
function headerBlock(headers: [string, string][]): Buffer {
  return Buffer.concat(
    headers.flatMap(([name, value]) => [
      Buffer.from([0, name.length]),
      Buffer.from(name),
      Buffer.from([value.length]),
      Buffer.from(value),
    ]),
  );
}

const DATA = 0;
const HEADERS = 1;
const RST_STREAM = 3;
const SETTINGS = 4;
const END_HEADERS = 4;

describe('HTTP/2: an upload the client reset mid-body, before END_STREAM', () => {
  it('is never handed to the handler as a whole body', async () => {
    const app = createApp({ keepAliveTimeout: 0, parsers: { text: ['text/*'] } });
    apps.push(app);
    const ran: string[] = [];
    const responses: number[] = [];
    app.onResponse((_ctx, info) => {
      responses.push(info.status);
    });
    app.post('/text', (ctx) => {
      ran.push(`text ${JSON.stringify(ctx.body)}`);
      return ctx.json({ stored: ctx.body });
    });
    app.post('/json', (ctx) => {
      ran.push(`json ${JSON.stringify(ctx.body)}`);
      return ctx.json({ ok: 1 });
    });
    app.post('/stream', async (ctx) => {
      let got = '';
      try {
        for await (const chunk of ctx.req) got += chunk;
        ran.push(`stream ended ${JSON.stringify(got)}`);
      } catch {
        ran.push('stream aborted');
      }
      return ctx.json({ got });
    });
    const server = createHttp2Server(app.handler);
    app.attach(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const socket = netConnect((server.address() as AddressInfo).port, '127.0.0.1');
    socket.on('error', () => {});
    socket.resume();
    socket.write(
      Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), frame(SETTINGS, 0, 0)]),
    );
    const cancel = Buffer.alloc(4);
    cancel.writeUInt32BE(constants.NGHTTP2_CANCEL);
    let id = 1;
    for (const [path, type, partial] of [
      ['/text', 'text/plain', 'transfer $100 to acc'],
      ['/json', 'application/json', '[1,2,3]'],
      ['/stream', 'application/octet-stream', 'chunk-1;'],
    ] as const) {
      const headers = headerBlock([
        [':method', 'POST'],
        [':path', path],
        [':scheme', 'http'],
        [':authority', 'x'],
        ['content-type', type],
      ]);
      socket.write(frame(HEADERS, END_HEADERS, id, headers));
      socket.write(frame(DATA, 0, id, Buffer.from(partial)));
      await until(() => appStats(app).inflight === 1);
      // The bytes reach the body reader (or the handler's) before the reset.
      await new Promise((r) => setTimeout(r, 50));
      socket.write(frame(RST_STREAM, 0, id, cancel));
      await until(() => appStats(app).inflight === 0);
      id += 2;
    }
    socket.destroy();
    // The parsed routes never ran; the raw reader saw an abort, not an end; none was answered.
    expect(ran).toEqual(['stream aborted']);
    expect(responses).toEqual([0, 0, 0]);
  });
});
