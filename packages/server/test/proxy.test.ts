import { describe, expect, it } from 'vitest';
import { createApp } from '../src/index';
import { raw, start } from './helpers';

function app() {
  const a = createApp();
  a.get('/ip', (ctx) => ctx.json({ ip: ctx.ip, ips: ctx.ips, peer: ctx.req.remoteAddress }));
  return a;
}

describe('trust proxy', () => {
  it('ignores X-Forwarded-For when off (spoofing), over a real socket', async () => {
    const a = app();
    const { port } = await start(a);
    const res = await raw(port, {
      path: '/ip',
      headers: { 'x-forwarded-for': '6.6.6.6, 7.7.7.7' },
    });
    expect(JSON.parse(res.body)).toEqual({ ip: '127.0.0.1', ips: [], peer: '127.0.0.1' });
    await a.close();
  });

  it('true: the leftmost hop and the whole list', async () => {
    const a = app().setTrustProxy(true);
    const res = await a.inject({
      url: '/ip',
      headers: { 'x-forwarded-for': '1.1.1.1, 2.2.2.2' },
      remoteAddress: '10.0.0.1',
    });
    expect(res.json()).toEqual({ ip: '1.1.1.1', ips: ['1.1.1.1', '2.2.2.2'], peer: '10.0.0.1' });
    const none = await a.inject({ url: '/ip', remoteAddress: '10.0.0.1' });
    expect(none.json()).toEqual({ ip: '10.0.0.1', ips: [], peer: '10.0.0.1' });
  });

  it('a hop count trusts that many proxies, right to left', async () => {
    const a = app().setTrustProxy(1);
    const res = await a.inject({
      url: '/ip',
      headers: { 'x-forwarded-for': '6.6.6.6, 3.3.3.3' },
      remoteAddress: '10.0.0.1',
    });
    // The client forged 6.6.6.6; the one proxy appended 3.3.3.3, the real client.
    expect(res.json()).toMatchObject({ ip: '3.3.3.3', ips: ['3.3.3.3'] });
    const two = app().setTrustProxy(2);
    const res2 = await two.inject({
      url: '/ip',
      headers: { 'x-forwarded-for': '6.6.6.6, 3.3.3.3, 10.0.0.2' },
      remoteAddress: '10.0.0.1',
    });
    expect(res2.json()).toMatchObject({ ip: '3.3.3.3', ips: ['3.3.3.3', '10.0.0.2'] });
  });

  it('a list of addresses / CIDRs stops at the first untrusted hop', async () => {
    const a = app().setTrustProxy(['10.0.0.0/8', '192.168.1.5']);
    const res = await a.inject({
      url: '/ip',
      headers: { 'x-forwarded-for': '6.6.6.6, 5.5.5.5, 192.168.1.5' },
      remoteAddress: '10.0.0.1',
    });
    expect(res.json()).toMatchObject({ ip: '5.5.5.5', ips: ['5.5.5.5', '192.168.1.5'] });
    // A peer outside the list: its X-Forwarded-For is not believed at all.
    const direct = await a.inject({
      url: '/ip',
      headers: { 'x-forwarded-for': '6.6.6.6' },
      remoteAddress: '8.8.8.8',
    });
    expect(direct.json()).toMatchObject({ ip: '8.8.8.8', ips: [] });
    const csv = app().setTrustProxy('loopback, 10.0.0.1');
    const res3 = await csv.inject({
      url: '/ip',
      headers: { 'x-forwarded-for': '4.4.4.4' },
      remoteAddress: '10.0.0.1',
    });
    expect(res3.json()).toMatchObject({ ip: '4.4.4.4' });
  });

  it('rejects invalid settings', () => {
    expect(() => createApp().setTrustProxy(-1)).toThrow(RangeError);
    expect(() => createApp().setTrustProxy(['not-an-ip'])).toThrow(
      /keel: `trustProxy` must be IP addresses.*, got "not-an-ip"/,
    );
    expect(() => createApp({ trustProxy: 1.5 })).toThrow(RangeError);
  });
});
