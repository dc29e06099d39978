// Parity: per-route body limits and text / raw parsers. Attacker angle: a body over a route's own
// limit, types no parser was asked to read, malformed parser options.
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/index';
import { guardProcess } from './harness';

guardProcess();

describe('text and raw parsers, per-route limits', () => {
  it('reads the listed types as text or bytes; others stay unread', async () => {
    const app = createApp({ parsers: { text: ['text/*'], raw: ['application/octet-stream'] } });
    app.post('/b', (ctx) =>
      ctx.json({
        type: Buffer.isBuffer(ctx.body) ? 'buffer' : typeof ctx.body,
        value: Buffer.isBuffer(ctx.body) ? [...ctx.body] : (ctx.body ?? null),
      }),
    );
    const post = (type: string, body: string | Buffer) =>
      app.inject({ method: 'POST', url: '/b', headers: { 'content-type': type }, body });
    expect((await post('text/plain; charset=utf-8', 'héllo')).json()).toEqual({
      type: 'string',
      value: 'héllo',
    });
    expect((await post('text/csv', 'a,b')).json()).toEqual({ type: 'string', value: 'a,b' });
    expect((await post('application/octet-stream', Buffer.from([1, 2, 255]))).json()).toEqual({
      type: 'buffer',
      value: [1, 2, 255],
    });
    expect((await post('image/png', 'x')).json()).toEqual({ type: 'undefined', value: null });
    // JSON and forms are always parsed.
    expect((await post('application/json', '{"a":1}')).json()).toEqual({
      type: 'object',
      value: { a: 1 },
    });
  });

  it('route options replace the app limit and parsers for that route', async () => {
    const app = createApp({ bodyLimit: 16 });
    app.post('/small', (ctx) => ctx.json(ctx.body ?? null));
    app.post('/large', { bodyLimit: 1024, parsers: { raw: ['*/*'] } }, (ctx) =>
      ctx.json(Buffer.isBuffer(ctx.body) ? ctx.body.length : ctx.body),
    );
    const body = JSON.stringify({ s: 'x'.repeat(100) });
    const json = { 'content-type': 'application/json' };
    expect((await app.inject({ method: 'POST', url: '/small', headers: json, body })).status).toBe(
      413,
    );
    expect(
      (await app.inject({ method: 'POST', url: '/large', headers: json, body })).json(),
    ).toEqual({ s: 'x'.repeat(100) });
    const raw = await app.inject({ method: 'POST', url: '/large', body: Buffer.alloc(500) });
    expect(raw.json()).toBe(500);
    const tooBig = await app.inject({ method: 'POST', url: '/large', body: Buffer.alloc(2000) });
    expect(tooBig.status).toBe(413);
    expect(() => app.post('/x', { parsers: { text: ['nonsense'] } }, () => {})).toThrow(RangeError);
    expect(() => app.post('/y', { bodyLimit: -1 }, () => {})).toThrow(RangeError);
    expect(() => app.post('/z', 'x' as never, () => {})).toThrow(TypeError);
  });
});
