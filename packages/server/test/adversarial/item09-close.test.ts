// Item 9: app.close() never resolved when a handler opened SSE after close began, or never
// answered at all.
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { appStats } from '../../src/app';
import { createApp } from '../../src/index';
import { start, until } from '../helpers';
import { guardProcess, within } from './harness';

guardProcess();

/** Starts a GET and resolves with how it ended: the status and body, or the socket error. */
function get(port: number, path: string): Promise<string> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve(`${res.statusCode} ${body}`));
      res.on('error', (e) => resolve(`error ${e.message}`));
    });
    req.on('error', (e) => resolve(`error ${e.message}`));
    req.end();
  });
}

describe('item 9: close() always finishes', () => {
  it('a stream opened after close began ends at once', async () => {
    const app = createApp();
    let open!: () => void;
    const gate = new Promise<void>((r) => {
      open = r;
    });
    app.get('/late', async (ctx) => {
      await gate;
      return ctx.sseInterval(() => 'tick', 50);
    });
    const { port } = await start(app);
    const client = get(port, '/late');
    await until(() => appStats(app).inflight === 1);
    const closing = app.close();
    open();
    await within(closing, 4_000, 'close()');
    expect(await within(client)).toMatch(/^200 /);
  });

  it('close({ timeoutMs }) ends connections whose handler never answers', async () => {
    const app = createApp();
    app.get('/hang', () => new Promise(() => {}));
    const { port } = await start(app);
    const client = get(port, '/hang');
    await until(() => appStats(app).inflight === 1);
    await within(app.close({ timeoutMs: 100 }), 4_000, 'close()');
    expect(await within(client)).toMatch(/^error /);
  });

  it('rejects a bad timeoutMs', () => {
    expect(() => createApp().close({ timeoutMs: -1 })).toThrow(RangeError);
  });
});
