// Spec-conformance pass 33 of the ctx spec (seeds/001) over a real loopback socket.
import { describe, expect, it } from 'vitest';
import { createApp } from '../src/index';
import { call, serve } from './blackbox/helpers';

describe('ctx.ips: "array of string", proxy addresses from X-Forwarded-For', () => {
  it('is the handler’s own array: changing it leaves ctx.hostname / ctx.protocol on the trusted hop count', async () => {
    const app = createApp();
    // Two trusted proxies: the TCP peer (loopback) and 10.0.0.1; 198.51.100.1 is the client.
    app.setTrustProxy(2);
    app.get('/q', (ctx) => {
      const before = { ip: ctx.ip, ips: [...ctx.ips], host: ctx.hostname };
      ctx.ips.length = 0;
      ctx.ips.push('192.0.2.1', '192.0.2.2', '192.0.2.3');
      return ctx.json({ before, host: ctx.hostname, proto: ctx.protocol, ip: ctx.ip });
    });
    const port = await serve(app);
    const r = await call(port, {
      path: '/q',
      headers: {
        'x-forwarded-for': '203.0.113.9, 198.51.100.1, 10.0.0.1',
        // The outer proxy (10.0.0.1) wrote b.test; the peer appended c.test.
        'x-forwarded-host': 'a.test, b.test, c.test',
        'x-forwarded-proto': 'https, https, http',
      },
    });
    expect(r.json()).toEqual({
      before: { ip: '198.51.100.1', ips: ['198.51.100.1', '10.0.0.1'], host: 'b.test' },
      host: 'b.test',
      proto: 'https',
      ip: '198.51.100.1',
    });
  });
});
