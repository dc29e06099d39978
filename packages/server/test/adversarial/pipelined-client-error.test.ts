// A malformed request pipelined behind a valid one still being answered: the clientError
// listener wrote its 400 at once and destroyed the connection, so the valid request's answer was
// never sent and a pipelining client read the 400 as that request's answer (responses come in
// request order). Now the answer in flight goes out first, then the 400, then the close.
import { describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/index';
import { closedAfterEach, openRaw, settle, start, until } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

const { apps, sockets } = closedAfterEach();

/** POST /slow, answered once `release` is called; `entered` once it runs. */
function heldRoute(app: App): { release: () => void; entered: () => boolean } {
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let entered = false;
  app.post('/slow', async (ctx) => {
    entered = true;
    await held;
    ctx.json({ slow: true });
  });
  return { release, entered: () => entered };
}

describe('a malformed request pipelined behind one being answered', () => {
  it.each([
    ['an invalid method token', 'G(T / HTTP/1.1\r\nHost: a\r\n\r\n'],
    ['a control character in a header value', 'GET / HTTP/1.1\r\nHost: a\r\nX: \x01\r\n\r\n'],
  ])('%s: the earlier answer first, then 400, then close', async (_n, bad) => {
    const app = createApp();
    apps.push(app);
    const { release, entered } = heldRoute(app);
    const { port } = await start(app);
    const c = await openRaw(port, sockets);
    c.s.write(`POST /slow HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n${bad}`);
    await until(entered);
    await settle();
    release();
    await until(() => c.closed());
    const statuses = [...c.text().matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]);
    expect(statuses).toEqual(['200', '400']);
    expect(c.text()).toContain('{"slow":true}');
  });

  it('an answer already sent whole: the 400 follows it', async () => {
    const app = createApp();
    apps.push(app);
    app.get('/q', (ctx) => ctx.json({ q: 1 }));
    const { port } = await start(app);
    const c = await openRaw(port, sockets);
    c.s.write('GET /q HTTP/1.1\r\nHost: a\r\n\r\nG(T / HTTP/1.1\r\n\r\n');
    await until(() => c.closed());
    const statuses = [...c.text().matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]);
    expect(statuses).toEqual(['200', '400']);
  });
});

describe('the client leaves while the earlier answer is still being made', () => {
  it('the held answer is still reported, and nothing waits on the closed connection', async () => {
    const app = createApp();
    apps.push(app);
    let finished: boolean | undefined;
    const { release, entered } = heldRoute(app);
    app.onResponse((_ctx, info) => {
      finished = info.finished;
    });
    const { port } = await start(app);
    const c = await openRaw(port, sockets);
    c.s.write('POST /slow HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\nG(T / HTTP/1.1\r\n\r\n');
    await until(entered);
    c.s.destroy();
    await settle();
    release();
    // The handler's answer is reported, and app.close() (afterEach) finds nothing held open.
    await until(() => finished !== undefined);
  });
});
