// A query of more than 1000 parameters is refused when read (414), as a form body of as many
// fields is. Read once the response had started (an event stream's timer, a callback after the
// answer) the 414 could no longer be the answer: it was thrown where nothing handles it (an
// uncaught exception, ending the process), or, thrown through the handler, dropped as a client
// error with the response cut and nobody told. Now it goes to onError, and the read gives
// nothing (no parameter), every later read too.
import { describe, expect, it } from 'vitest';
import { type Context, createApp, HttpException } from '../../src/index';
import { closedAfterEach, openRaw, start, until } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

const { apps, sockets } = closedAfterEach();

const TOO_MANY = `${Array.from({ length: 1000 }, (_, i) => `k=${i}`).join('&')}&last=yes`;

async function served(handler: (ctx: Context, late: (read: () => void) => void) => unknown) {
  const app = createApp();
  apps.push(app);
  const reported: unknown[] = [];
  const reads: unknown[] = [];
  app.onError((err) => {
    reported.push(err);
  });
  app.get('/q', (ctx) =>
    handler(ctx, (read) => {
      try {
        read();
        reads.push('returned');
      } catch (err) {
        reads.push(err);
      }
    }),
  );
  const { port } = await start(app);
  return { port, reported, reads };
}

function lateQueryError(err: unknown): void {
  expect(err).toBeInstanceOf(Error);
  expect(err).not.toBeInstanceOf(HttpException);
  expect((err as Error).message).toMatch(/more than 1000 parameters/);
  expect((err as Error).cause).toBeInstanceOf(HttpException);
  expect(((err as Error).cause as HttpException).status).toBe(414);
}

describe('a query of more than 1000 parameters read after the response started', () => {
  it('in an event stream, from a timer: onError, the read gives nothing, the stream goes on', async () => {
    let got: unknown = 'unset';
    let all: unknown = 'unset';
    const { port, reported, reads } = await served((ctx, late) => {
      ctx.sseEvent('open', '1');
      setTimeout(() =>
        late(() => {
          got = ctx.query('last');
          all = ctx.queryAll('k');
          ctx.query('k');
          ctx.sseEvent('after', 'still open');
        }),
      );
    });
    const c = await openRaw(port, sockets);
    c.s.write(`GET /q?${TOO_MANY} HTTP/1.1\r\nHost: x\r\n\r\n`);
    await until(() => reads.length === 1);
    expect(reads).toEqual(['returned']);
    expect(got).toBeUndefined();
    expect(all).toEqual([]);
    expect(reported).toHaveLength(1); // once, not per read
    lateQueryError(reported[0]);
    await until(() => c.text().includes('still open'));
  });

  it('thrown through the handler after it wrote: onError knows why the response was cut', async () => {
    const { port, reported } = await served(async (ctx) => {
      ctx.res.writeHead(200, { 'content-type': 'text/plain' });
      ctx.res.write('part');
      // Read as a handler would: its throw (if any) is the handler's.
      if (ctx.query('last') === undefined) throw new Error('no last');
      ctx.res.end('!');
    });
    const c = await openRaw(port, sockets);
    c.s.write(`GET /q?${TOO_MANY} HTTP/1.1\r\nHost: x\r\n\r\n`);
    await until(() => reported.length === 2);
    lateQueryError(reported[0]);
    expect((reported[1] as Error).message).toBe('no last');
  });

  it('from a callback after the answer (a stale ctx): onError, no uncaught exception', async () => {
    const { port, reported, reads } = await served((ctx, late) => {
      ctx.send('done');
      setTimeout(() => late(() => ctx.query('last')));
    });
    const c = await openRaw(port, sockets);
    c.s.write(`GET /q?${TOO_MANY} HTTP/1.1\r\nHost: x\r\n\r\n`);
    await until(() => reads.length === 1);
    expect(reads).toEqual(['returned']);
    expect(reported).toHaveLength(1);
    lateQueryError(reported[0]);
  });

  it('read before the response started it is still the 414', async () => {
    const { port, reported } = await served((ctx) => ctx.send(ctx.query('last') ?? '-'));
    const c = await openRaw(port, sockets);
    c.s.write(`GET /q?${TOO_MANY} HTTP/1.1\r\nHost: x\r\n\r\n`);
    await until(() => c.text().includes('parameters'));
    expect(c.text()).toMatch(/^HTTP\/1\.1 414 /);
    expect(reported).toEqual([]);
  });
});
