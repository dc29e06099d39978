// `ctx.ip` gives an IPv4 client of a dual-stack listener as `a.b.c.d`, not `::ffff:a.b.c.d`, so
// one client has one spelling. A proxy on a dual-stack socket writes its peer into
// X-Forwarded-For the mapped way (nginx's `$remote_addr`): behind it the same client was
// `::ffff:a.b.c.d`, and a per-address ban or rate limit keyed on `ctx.ip` ('203.0.113.7') missed
// it. Forwarded hops are unmapped as the peer is.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/index';
import { raw, start } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

let app: App;
let port: number;

beforeAll(async () => {
  app = createApp({ trustProxy: 'loopback' });
  app.get('/ip', (ctx) => ctx.json({ ip: ctx.ip, ips: ctx.ips }));
  ({ port } = await start(app));
});

afterAll(() => app.close());

async function ipFor(forwarded: string): Promise<unknown> {
  const res = await raw(port, { path: '/ip', headers: { 'x-forwarded-for': forwarded } });
  return JSON.parse(res.body);
}

describe('X-Forwarded-For hops written as IPv4-mapped IPv6', () => {
  it.each([['::ffff:203.0.113.7'], ['[::ffff:203.0.113.7]:51000'], ['::FFFF:203.0.113.7']])(
    '%s is the IPv4 client',
    async (hop) => {
      expect(await ipFor(hop)).toEqual({ ip: '203.0.113.7', ips: ['203.0.113.7'] });
    },
  );

  it('trusted hops are judged and given unmapped too', async () => {
    expect(await ipFor('198.51.100.1, ::ffff:127.0.0.1')).toEqual({
      ip: '198.51.100.1',
      ips: ['198.51.100.1', '127.0.0.1'],
    });
  });

  it('other IPv6 addresses are left as they are', async () => {
    expect(await ipFor('2001:db8::1')).toEqual({ ip: '2001:db8::1', ips: ['2001:db8::1'] });
  });
});
