import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { start, trackApps, until } from '../helpers';

const make = trackApps();

describe('a handler that gives up because its client left', () => {
  it('is not reported as "sent no response": there is nobody to answer', async () => {
    const errors: unknown[] = [];
    const app = make();
    app.onError((err) => {
      errors.push(err);
    });
    let returned = false;
    app.get('/wait', async (ctx) => {
      // Waits for the client to leave (as a long poll or a render aborted on close does).
      await new Promise<void>((resolve) => ctx.res.once('close', () => resolve()));
      await new Promise((r) => setTimeout(r, 10));
      returned = true;
    });
    app.get('/ok', (ctx) => ctx.json({ ok: true }));
    const { port, base } = await start(app);
    const socket = connect(port, '127.0.0.1');
    socket.write('GET /wait HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((r) => setTimeout(r, 50));
    socket.destroy();
    await until(() => returned);
    await new Promise((r) => setTimeout(r, 20));
    expect(errors).toEqual([]);
    // The ctx went back to the pool in a usable state.
    expect(await (await fetch(`${base}/ok`)).json()).toEqual({ ok: true });
  });
});
