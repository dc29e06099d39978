// Pipelined requests on one keep-alive connection are parsed at once and run side by side, each
// on its own pooled slot: an early one that is slow, throws, has a malformed or oversize body,
// must not give its answer, its ctx or its request id to a later one.
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { appStats } from '../../src/app';
import { start, trackApps, until } from '../helpers';
import { guardProcess } from './harness';

guardProcess();
const make = trackApps();

interface Answer {
  status: number;
  id: string;
  body: string;
}

/** Sends `requests` in one write and parses `count` answers (Content-Length bodies) in order. */
function pipeline(port: number, requests: string[], count: number): Promise<Answer[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const answers: Answer[] = [];
    socket.setEncoding('latin1');
    socket.on('error', reject);
    socket.on('data', (chunk: string) => {
      text += chunk;
      for (;;) {
        const head = text.indexOf('\r\n\r\n');
        if (head === -1) break;
        const lines = text.slice(0, head).split('\r\n');
        const field = (name: string): string =>
          lines
            .find((l) => l.toLowerCase().startsWith(`${name}:`))
            ?.slice(name.length + 1)
            .trim() ?? '';
        const length = Number(field('content-length'));
        if (text.length < head + 4 + length) break;
        answers.push({
          status: Number(lines[0]!.split(' ')[1]),
          id: field('x-request-id'),
          body: text.slice(head + 4, head + 4 + length),
        });
        text = text.slice(head + 4 + length);
      }
      if (answers.length === count) {
        socket.destroy();
        resolve(answers);
      }
    });
    socket.write(requests.join(''));
  });
}

describe('pipelined requests on one connection', () => {
  it('a slow, a throwing and a malformed request leave the next ones their own ctx', async () => {
    const app = make({ bodyLimit: 64 });
    const reported: unknown[] = [];
    app.onError((err) => {
      reported.push(err);
    });
    app.get('/slow/:id', async (ctx) => {
      await new Promise((r) => setTimeout(r, 20));
      return ctx.json({ id: ctx.params.id, rid: ctx.requestId });
    });
    app.get('/boom/:id', () => {
      throw new Error('boom');
    });
    app.post('/echo/:id', (ctx) => ctx.json({ id: ctx.params.id, body: ctx.body }));
    app.get('/p/:id', (ctx) => ctx.json({ id: ctx.params.id, rid: ctx.requestId }));
    const { port } = await start(app);
    const post = (id: string, body: string): string =>
      `POST /echo/${id} HTTP/1.1\r\nHost: x\r\nX-Request-ID: r${id}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const get = (path: string, id: string): string =>
      `GET ${path} HTTP/1.1\r\nHost: x\r\nX-Request-ID: r${id}\r\n\r\n`;
    const answers = await pipeline(
      port,
      [
        get('/slow/1', '1'),
        get('/boom/2', '2'),
        post('3', '{bad'),
        post('4', `{"a":"${'x'.repeat(100)}"}`), // over the 64-byte limit: 413, drained
        post('5', '{"a":5}'),
        get('/p/6', '6'),
      ],
      6,
    );
    expect(answers.map((a) => [a.status, a.id])).toEqual([
      [200, 'r1'],
      [500, 'r2'],
      [400, 'r3'],
      [413, 'r4'],
      [200, 'r5'],
      [200, 'r6'],
    ]);
    expect(JSON.parse(answers[0]!.body)).toEqual({ id: '1', rid: 'r1' });
    expect(JSON.parse(answers[4]!.body)).toEqual({ id: '5', body: { a: 5 } });
    expect(JSON.parse(answers[5]!.body)).toEqual({ id: '6', rid: 'r6' });
    expect(reported).toHaveLength(1);
    await until(() => appStats(app).inflight === 0);
  });
});
