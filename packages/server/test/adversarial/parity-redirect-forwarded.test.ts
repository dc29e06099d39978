// Parity: ctx.redirect and ctx.protocol / secure / hostname. Attacker angle: CR/LF in a redirect
// target (header injection), X-Forwarded-Proto / -Host forged by a client that is not a proxy.
import { describe, expect, it } from 'vitest';
import { createApp, type TrustProxy } from '../../src/index';
import { guardProcess } from './harness';

guardProcess();

describe('ctx.redirect', () => {
  it('sets Location (percent-encoded where needed) with 302 by default or the given status', async () => {
    const app = createApp();
    app.get('/a', (ctx) => ctx.redirect('/b?q=a b&x=%20'));
    app.post('/done', (ctx) => ctx.redirect('https://example.com/ok', 303));
    const a = await app.inject({ url: '/a' });
    expect(a.status).toBe(302);
    expect(a.headers.location).toBe('/b?q=a%20b&x=%20');
    expect(a.body).toBe('');
    const done = await app.inject({ method: 'POST', url: '/done' });
    expect(done.status).toBe(303);
    expect(done.headers.location).toBe('https://example.com/ok');
  });

  it('refuses CR/LF (header injection), an empty URL and a non-redirect status', async () => {
    const app = createApp();
    const errors: unknown[] = [];
    app.onError((err) => {
      errors.push(err);
    });
    app.get('/inject', (ctx) => ctx.redirect('/x\r\nSet-Cookie: admin=1'));
    app.get('/empty', (ctx) => ctx.redirect(''));
    app.get('/status', (ctx) => ctx.redirect('/x', 200));
    const res = await app.inject({ url: '/inject' });
    expect(res.status).toBe(500);
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(res.headers.location).toBeUndefined();
    expect((await app.inject({ url: '/empty' })).status).toBe(500);
    expect((await app.inject({ url: '/status' })).status).toBe(500);
    expect(errors.map((e) => (e as Error).name)).toEqual([
      'RangeError',
      'RangeError',
      'RangeError',
    ]);
  });
});

describe('ctx.protocol, ctx.secure, ctx.hostname', () => {
  function make(trustProxy: TrustProxy) {
    const app = createApp({ trustProxy });
    app.get('/', (ctx) =>
      ctx.json({ protocol: ctx.protocol, secure: ctx.secure, hostname: ctx.hostname }),
    );
    return app;
  }
  const forwarded = {
    host: 'internal:8080',
    'x-forwarded-proto': 'https, http',
    'x-forwarded-host': 'shop.example, proxy.internal',
    // Two proxies appended (the outer one saw shop.example over https): an entry per proxy.
    'x-forwarded-for': '203.0.113.7, 10.0.0.2',
  };

  it('ignores X-Forwarded-* without trust proxy', async () => {
    const res = await make(false).inject({
      url: '/',
      headers: forwarded,
      remoteAddress: '10.0.0.1',
    });
    expect(res.json()).toEqual({ protocol: 'http', secure: false, hostname: 'internal' });
  });

  it('believes them from a trusted proxy only', async () => {
    const app = make('10.0.0.0/8');
    const trusted = await app.inject({ url: '/', headers: forwarded, remoteAddress: '10.0.0.1' });
    expect(trusted.json()).toEqual({ protocol: 'https', secure: true, hostname: 'shop.example' });
    const direct = await app.inject({ url: '/', headers: forwarded, remoteAddress: '8.8.8.8' });
    expect(direct.json()).toEqual({ protocol: 'http', secure: false, hostname: 'internal' });
  });

  it('ignores values that are not a protocol or a host name', async () => {
    const app = make(true);
    const res = await app.inject({
      url: '/',
      headers: {
        host: '[::1]:3000',
        'x-forwarded-proto': 'javascript',
        'x-forwarded-host': 'a b<script>',
      },
    });
    expect(res.json()).toEqual({ protocol: 'http', secure: false, hostname: '[::1]' });
    // A Host value no URL has as its host is refused before the route (RFC 9112 §3.2).
    const bad = await make(false).inject({ url: '/', headers: { host: 'evil.com/path' } });
    expect(bad.status).toBe(400);
    const odd = await make(false).inject({ url: '/', headers: { host: 'a..b' } });
    expect(odd.json<{ hostname: string }>().hostname).toBe('');
  });
});
