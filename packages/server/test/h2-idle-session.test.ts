// `keepAliveTimeout` on an HTTP/2 server given to `app.attach()`: Node closes an idle HTTP/1
// connection after its keepAliveTimeout, but keeps an idle HTTP/2 session open for ever (its
// `server.timeout` is off). A session with no open stream for `keepAliveTimeout` is closed
// (GOAWAY); one with a stream open is not, however quiet. With `requestTimeout`, a session of
// silent uploads ends too: nothing is pinned. `app.close()` closes every session (Node's
// server.close() waits for them). Real `node:http2` clients, the injected clock.

import { type ClientHttp2Session, constants, createServer as createHttp2Server } from 'node:http2';
import { describe, expect, it } from 'vitest';
import { appStats } from '../src/app';
import { type App, type AppOptions, createApp } from '../src/index';
import { fetchText, h2Fixture } from './h2-helpers';
import { ManualClock, until } from './helpers';

const { apps, listen, connect } = h2Fixture();

async function serve(
  options: AppOptions = {},
): Promise<{ app: App; clock: ManualClock; port: number; release: () => void }> {
  const clock = new ManualClock();
  const app = createApp({
    clock,
    sendTimeout: 0,
    requestTimeout: 0,
    keepAliveTimeout: 1000,
    ...options,
  });
  apps.push(app);
  const waiting: (() => void)[] = [];
  app.get('/small', (ctx) => ctx.send('ok'));
  app.get('/wait', async (ctx) => {
    await new Promise<void>((resolve) => waiting.push(resolve));
    return ctx.send('late');
  });
  app.post('/json', (ctx) => ctx.json({ got: ctx.body }));
  const server = createHttp2Server(app.handler);
  const port = await listen(app, server);
  return {
    app,
    clock,
    port,
    release: () => {
      for (const w of waiting.splice(0)) w();
    },
  };
}

/** A session, and whether the server told it to go away. */
function session(port: number): { s: ClientHttp2Session; goaway: number[] } {
  const s = connect(`http://127.0.0.1:${port}`);
  const goaway: number[] = [];
  s.on('goaway', (code: number) => goaway.push(code));
  return { s, goaway };
}

/** The server's side of the session exists (its idle timer armed). */
async function connected(s: ClientHttp2Session, clock: ManualClock): Promise<void> {
  await new Promise<void>((resolve) => s.once('connect', () => resolve()));
  await until(() => clock.active === 1);
}

/** Told to go away, without an error (Node's graceful close may send GOAWAY twice). */
function expectGoaway(codes: number[]): void {
  expect(codes.length).toBeGreaterThan(0);
  for (const code of codes) expect(code).toBe(constants.NGHTTP2_NO_ERROR);
}

describe('keepAliveTimeout on an attached HTTP/2 server', () => {
  it('a session that opens no stream is closed (GOAWAY NO_ERROR) after keepAliveTimeout', async () => {
    const { clock, port } = await serve();
    const { s, goaway } = session(port);
    await connected(s, clock);
    clock.tick(999);
    await new Promise((r) => setTimeout(r, 20));
    expect(s.closed).toBe(false);
    clock.tick(1);
    await until(() => s.closed || s.destroyed);
    expectGoaway(goaway);
    expect(clock.active).toBe(0);
  });

  it('idle is counted from its last stream closing; a quiet stream keeps it open', async () => {
    const { app, clock, port, release } = await serve();
    const { s, goaway } = session(port);
    await connected(s, clock);
    expect(await fetchText(s, '/small')).toBe('ok');
    const waiting = fetchText(s, '/wait');
    await until(() => appStats(app).inflight === 1);
    // No timer while a stream is open, however long it is quiet.
    expect(clock.active).toBe(0);
    clock.tick(5000);
    await new Promise((r) => setTimeout(r, 20));
    expect(s.closed).toBe(false);
    release();
    expect(await waiting).toBe('late');
    await until(() => clock.active === 1);
    clock.tick(999);
    expect(await fetchText(s, '/small')).toBe('ok');
    await until(() => clock.active === 1);
    clock.tick(999);
    await new Promise((r) => setTimeout(r, 20));
    expect(s.closed).toBe(false);
    clock.tick(1);
    await until(() => s.closed || s.destroyed);
    expectGoaway(goaway);
    expect(clock.active).toBe(0);
  });

  it('with requestTimeout, a session of silent uploads is ended whole: streams 408, then the session', async () => {
    const { app, clock, port } = await serve({ requestTimeout: 1000, headersTimeout: 1000 });
    const { s, goaway } = session(port);
    await connected(s, clock);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const stream = s.request({
        ':method': 'POST',
        ':path': '/json',
        'content-type': 'application/json',
        'content-length': '100',
      });
      stream.on('error', () => {});
      stream.on('response', (h) => statuses.push(Number(h[':status'])));
      stream.write('{"a":');
    }
    await until(() => appStats(app).inflight === 5);
    clock.tick(1000);
    await until(() => statuses.length === 5 && appStats(app).inflight === 0);
    expect(statuses).toEqual([408, 408, 408, 408, 408]);
    await until(() => clock.active === 1);
    clock.tick(1000);
    await until(() => s.closed || s.destroyed);
    expectGoaway(goaway);
    expect(clock.active).toBe(0);
  });

  it('keepAliveTimeout: 0 leaves sessions open (no timer)', async () => {
    const { clock, port } = await serve({ keepAliveTimeout: 0 });
    const { s } = session(port);
    await new Promise<void>((resolve) => s.once('connect', () => resolve()));
    expect(await fetchText(s, '/small')).toBe('ok');
    expect(clock.active).toBe(0);
    expect(s.closed).toBe(false);
  });
});

describe('app.close() on an attached HTTP/2 server', () => {
  it('closes an idle session at once (GOAWAY): close() does not wait for its timeout', async () => {
    const { app, clock, port } = await serve({ keepAliveTimeout: 0 });
    const { s, goaway } = session(port);
    expect(await fetchText(s, '/small')).toBe('ok');
    let closed = false;
    void app.close().then(() => {
      closed = true;
    });
    await until(() => closed);
    expectGoaway(goaway);
    await until(() => s.closed || s.destroyed);
    expect(clock.active).toBe(0);
  });

  it('a request in flight gets its answer, then its session ends and close() resolves', async () => {
    const { app, port, release } = await serve({ keepAliveTimeout: 0 });
    const { s, goaway } = session(port);
    const waiting = fetchText(s, '/wait');
    await until(() => appStats(app).inflight === 1);
    let closed = false;
    void app.close().then(() => {
      closed = true;
    });
    await until(() => goaway.length > 0);
    expect(closed).toBe(false);
    release();
    expect(await waiting).toBe('late');
    await until(() => closed);
    expectGoaway(goaway);
  });

  it('a session whose request never ends is destroyed once timeoutMs is up', async () => {
    const { app, clock, port } = await serve({ keepAliveTimeout: 0 });
    const { s } = session(port);
    const stream = s.request({ ':path': '/wait' });
    stream.on('error', () => {});
    await until(() => appStats(app).inflight === 1);
    let closed = false;
    void app.close({ timeoutMs: 1000 }).then(() => {
      closed = true;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(closed).toBe(false);
    expect(stream.closed).toBe(false);
    clock.tick(1000);
    // Its stream is cut with the session: nothing is left open.
    await until(() => closed && stream.closed && s.destroyed);
  });
});
