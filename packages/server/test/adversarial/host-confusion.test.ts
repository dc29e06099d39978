// ctx.hostname from a request whose host is ambiguous: two Host lines (a proxy in front may
// route by the last while Node keeps the first), or an absolute-form target whose authority
// differs from Host (RFC 9112 §3.2.2: the target's host wins, Host is ignored). And
// ctx.protocol, which an absolute-form `https://` target must not make `https` on a plain
// connection: the scheme is the client's word, the connection is not encrypted.
import { afterEach, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/index';
import { socketBytes, start } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

const apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close({ timeoutMs: 100 })));
});

async function hostnameFor(port: number, head: string): Promise<unknown> {
  const out = await socketBytes(port, `${head}Connection: close\r\n\r\n`, 2_000);
  const body = out.split('\r\n\r\n')[1] ?? '';
  return (JSON.parse(body) as { hostname: unknown }).hostname;
}

describe('ctx.hostname with an ambiguous host', () => {
  it('two Host lines: 400 (RFC 9112 §3.2), the route never runs, middleware sees no hostname', async () => {
    const app = createApp();
    apps.push(app);
    const ran: string[] = [];
    const seen: unknown[] = [];
    app.use(async (ctx, next) => {
      seen.push(ctx.hostname);
      await next();
    });
    app.get('/*', (ctx) => {
      ran.push(ctx.path);
      return ctx.json({ hostname: ctx.hostname });
    });
    app.post('/*', (ctx) => {
      ran.push(ctx.path);
      return ctx.json({ hostname: ctx.hostname });
    });
    const { port } = await start(app);
    expect(await hostnameFor(port, 'GET /h HTTP/1.1\r\nHost: shop.example\r\n')).toBe(
      'shop.example',
    );
    // A proxy in front may have routed by the last line while Node keeps the first: no code
    // reading Host (ctx.hostname, ctx.get('host'), req.headers.host) may see either.
    for (const head of [
      'GET /h HTTP/1.1\r\nHost: tenant-a.example\r\nhost: tenant-b.example\r\n',
      'GET /h HTTP/1.1\r\nHost: same.example\r\nHOST: same.example\r\n',
      'POST /h HTTP/1.1\r\nHost: a.example\r\nContent-Length: 2\r\nHost: b.example\r\nContent-Type: application/json\r\n',
    ]) {
      const out = await socketBytes(
        port,
        `${head}Connection: close\r\n\r\n${head.startsWith('POST') ? '{}' : ''}`,
        2_000,
      );
      expect(out.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
      expect(JSON.parse(out.split('\r\n\r\n')[1]!)).toMatchObject({
        status: 400,
        message: 'Two Host header lines: the request names no one host (RFC 9112, section 3.2)',
      });
    }
    expect(ran).toEqual(['/h']);
    expect(seen).toEqual(['shop.example', '', '', '']);
  });

  it('a Host value that is no host[:port]: 400 (RFC 9112 §3.2), the route never runs', async () => {
    const app = createApp();
    apps.push(app);
    const ran: string[] = [];
    app.get('/*', (ctx) => {
      ran.push(ctx.header('host') ?? '');
      return ctx.json({ hostname: ctx.hostname });
    });
    app.post('/*', (ctx) => {
      ran.push(ctx.header('host') ?? '');
      return ctx.json({ hostname: ctx.hostname });
    });
    const { port } = await start(app);
    // What a Host-injection probe sends: a path, userinfo, a query, a space, a second port, a
    // half IP literal, bytes outside ASCII, a backslash, a bad percent escape, a port with letters.
    for (const value of [
      'evil.example/reset?x=',
      'user@evil.example',
      'a.example?x',
      'a.example#x',
      'a b',
      'a.example:80:90',
      '[::1',
      '[::1]x',
      'caf\xe9.example',
      'a\\b',
      'a%zz',
      'a.example:8o',
      '"quoted"',
      '<a>',
    ]) {
      for (const head of [
        `GET /h HTTP/1.1\r\nHost: ${value}\r\n`,
        `POST /h HTTP/1.1\r\nHost: ${value}\r\nContent-Length: 2\r\nContent-Type: application/json\r\n`,
      ]) {
        const out = await socketBytes(
          port,
          `${head}Connection: close\r\n\r\n${head.startsWith('POST') ? '{}' : ''}`,
          2_000,
        );
        expect(out.split('\r\n')[0], value).toBe('HTTP/1.1 400 Bad Request');
        expect(JSON.parse(out.split('\r\n\r\n')[1]!)).toMatchObject({
          status: 400,
          message: 'Invalid Host header: not a host with an optional port (RFC 9112, section 3.2)',
        });
      }
    }
    expect(ran).toEqual([]);
    // Valid syntax, whatever ctx.hostname makes of it: answered by the route, as before (a
    // reg-name may hold `~`, sub-delims and escapes; a port is any digits; Host may be empty).
    for (const [value, hostname] of [
      ['shop.example', 'shop.example'],
      ['Shop.Example:8080', 'shop.example'],
      ['[::1]:3000', '[::1]'],
      ['[v1.fe80::a+en1]', ''],
      ['my~host', ''],
      ["a!$&'()*+,;=b", ''],
      ['a%41b', ''],
      ['a.test:99999', ''],
      ['a..b', ''],
      ['', ''],
      ['127.0.0.1:', '127.0.0.1'], // an empty port: RFC 3986 port = *DIGIT
    ]) {
      expect(await hostnameFor(port, `GET /h HTTP/1.1\r\nHost: ${value}\r\n`), value).toBe(
        hostname,
      );
    }
  });

  it("absolute-form: the target's host, not Host", async () => {
    const app = createApp();
    apps.push(app);
    app.get('/*', (ctx) => ctx.json({ hostname: ctx.hostname }));
    const { port } = await start(app);
    expect(
      await hostnameFor(port, 'GET http://b.example:8080/h?x HTTP/1.1\r\nHost: a.example\r\n'),
    ).toBe('b.example');
    expect(await hostnameFor(port, 'GET http://[::1]/h HTTP/1.1\r\nHost: a.example\r\n')).toBe(
      '[::1]',
    );
    // Userinfo in the target is an error (RFC 9110 §4.2.4), as in Host: the route ran with
    // hostname '' before.
    for (const target of ['http://u@evil/h', 'http://user:pw@other.example/h', 'http://a%zz/h']) {
      const out = await socketBytes(
        port,
        `GET ${target} HTTP/1.1\r\nHost: a.example\r\nConnection: close\r\n\r\n`,
        2_000,
      );
      expect(out.split('\r\n')[0], target).toBe('HTTP/1.1 400 Bad Request');
      expect(JSON.parse(out.split('\r\n\r\n')[1]!)).toMatchObject({
        status: 400,
        message:
          'Invalid host in the request target: not a host with an optional port (RFC 9110, section 4.2.4)',
      });
    }
  });
});

describe('ctx.protocol with an absolute-form https:// target', () => {
  async function seenFor(port: number, head: string): Promise<unknown> {
    const out = await socketBytes(port, `${head}Connection: close\r\n\r\n`, 2_000);
    return JSON.parse(out.split('\r\n\r\n')[1] ?? '');
  }

  it('a plain connection stays http: the target scheme is not believed', async () => {
    const app = createApp();
    apps.push(app);
    app.get('/*', (ctx) =>
      ctx.json({ protocol: ctx.protocol, secure: ctx.secure, hostname: ctx.hostname }),
    );
    const { port } = await start(app);
    expect(await seenFor(port, 'GET https://b.example/h HTTP/1.1\r\nHost: a.example\r\n')).toEqual({
      protocol: 'http',
      secure: false,
      hostname: 'b.example',
    });
    // Untrusted peer: X-Forwarded-Proto is ignored too.
    expect(
      await seenFor(
        port,
        'GET https://b.example/h HTTP/1.1\r\nHost: a.example\r\nX-Forwarded-Proto: https\r\n',
      ),
    ).toEqual({ protocol: 'http', secure: false, hostname: 'b.example' });
  });

  it("behind a trusted proxy, X-Forwarded-Proto decides, not the target's scheme", async () => {
    const app = createApp({ trustProxy: true });
    apps.push(app);
    app.get('/*', (ctx) => ctx.json({ protocol: ctx.protocol, secure: ctx.secure }));
    const { port } = await start(app);
    expect(
      await seenFor(
        port,
        'GET https://b.example/h HTTP/1.1\r\nHost: a.example\r\nX-Forwarded-Proto: http\r\n',
      ),
    ).toEqual({ protocol: 'http', secure: false });
    expect(
      await seenFor(
        port,
        'GET http://b.example/h HTTP/1.1\r\nHost: a.example\r\nX-Forwarded-Proto: https\r\n',
      ),
    ).toEqual({ protocol: 'https', secure: true });
    expect(await seenFor(port, 'GET https://b.example/h HTTP/1.1\r\nHost: a.example\r\n')).toEqual({
      protocol: 'http',
      secure: false,
    });
  });
});
