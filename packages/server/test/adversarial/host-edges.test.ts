// Request-edge cases sent as raw bytes to `app.listen()`: host names a careful server takes
// (a trailing-dot FQDN, Docker service names with `_`), forwarding headers a client prepends to
// behind an appending proxy, the `Allow` of a 405, two different Content-Type lines on a body,
// and a GET declaring a body far larger than any route reads.
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type App, type AppOptions, createApp } from '../../src/index';
import { socketBytes, start } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

const apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close({ timeoutMs: 100 })));
});

async function seen(options: AppOptions = {}): Promise<number> {
  const app = createApp(options);
  apps.push(app);
  app.get('/h', (ctx) => ctx.json({ hostname: ctx.hostname, protocol: ctx.protocol, ip: ctx.ip }));
  return (await start(app)).port;
}

/** The JSON body of the one response to `head` (Connection: close added). */
async function answer(port: number, head: string): Promise<Record<string, unknown>> {
  const out = await socketBytes(port, `${head}Connection: close\r\n\r\n`, 2_000);
  return JSON.parse(out.split('\r\n\r\n')[1] ?? '') as Record<string, unknown>;
}

const hostname = async (port: number, head: string): Promise<unknown> =>
  (await answer(port, head)).hostname;

describe('ctx.hostname: names a careful server takes', () => {
  it('a trailing-dot FQDN is the same host: the root dot is dropped', async () => {
    const port = await seen({ trustProxy: 'loopback' });
    expect(await hostname(port, 'GET /h HTTP/1.1\r\nHost: example.com.\r\n')).toBe('example.com');
    expect(await hostname(port, 'GET /h HTTP/1.1\r\nHost: Example.COM.:8080\r\n')).toBe(
      'example.com',
    );
    expect(await hostname(port, 'GET http://example.com./h HTTP/1.1\r\nHost: x\r\n')).toBe(
      'example.com',
    );
    expect(
      await hostname(port, 'GET /h HTTP/1.1\r\nHost: b\r\nX-Forwarded-Host: shop.example.\r\n'),
    ).toBe('shop.example');
    // Only one root dot: an empty label, or a name of dots alone, is no host name.
    expect(await hostname(port, 'GET /h HTTP/1.1\r\nHost: example.com..\r\n')).toBe('');
    expect(await hostname(port, 'GET /h HTTP/1.1\r\nHost: .\r\n')).toBe('');
    expect(await hostname(port, 'GET /h HTTP/1.1\r\nHost: .:80\r\n')).toBe('');
    // Nor is an empty label inside the name, wherever the name comes from (a forwarded one is
    // ignored, as any malformed one: the Host stands).
    expect(await hostname(port, 'GET /h HTTP/1.1\r\nHost: a..b\r\n')).toBe('');
    expect(await hostname(port, 'GET /h HTTP/1.1\r\nHost: A..b.:8080\r\n')).toBe('');
    expect(await hostname(port, 'GET http://a..b/h HTTP/1.1\r\nHost: x\r\n')).toBe('');
    expect(
      await hostname(port, 'GET /h HTTP/1.1\r\nHost: b\r\nX-Forwarded-Host: shop..example\r\n'),
    ).toBe('b');
  });

  it('underscores (Docker / compose service names) are a reg-name', async () => {
    const port = await seen({ trustProxy: 'loopback' });
    expect(await hostname(port, 'GET /h HTTP/1.1\r\nHost: my_api:3000\r\n')).toBe('my_api');
    expect(await hostname(port, 'GET /h HTTP/1.1\r\nHost: _svc.my_stack.local\r\n')).toBe(
      '_svc.my_stack.local',
    );
    expect(await hostname(port, 'GET http://my_api:3000/h HTTP/1.1\r\nHost: x\r\n')).toBe('my_api');
    expect(
      await hostname(port, 'GET /h HTTP/1.1\r\nHost: b\r\nX-Forwarded-Host: web_1:8080\r\n'),
    ).toBe('web_1');
    // Still refused: what a host name never holds (a space is no Host syntax at all: 400).
    expect(await answer(port, 'GET /h HTTP/1.1\r\nHost: a b\r\n')).toMatchObject({ status: 400 });
    expect(await hostname(port, 'GET /h HTTP/1.1\r\nHost: -a.example\r\n')).toBe('');
    expect(await hostname(port, 'GET /h HTTP/1.1\r\nHost: a.example-\r\n')).toBe('');
  });
});

describe('ctx.hostname: an empty port (RFC 3986: port = *DIGIT)', () => {
  // Routed (Node takes the Host line), but named no host: the name's pattern asked for a digit
  // after the colon.
  it('names the host, as an absent port does', async () => {
    const port = await seen({ trustProxy: 'loopback' });
    expect(await hostname(port, 'GET /h HTTP/1.1\r\nHost: example.com:\r\n')).toBe('example.com');
    expect(await hostname(port, 'GET /h HTTP/1.1\r\nHost: [::1]:\r\n')).toBe('[::1]');
    expect(await hostname(port, 'GET /h HTTP/1.1\r\nHost: Example.com.:\r\n')).toBe('example.com');
    expect(
      await hostname(port, 'GET /h HTTP/1.1\r\nHost: b\r\nX-Forwarded-Host: shop.example:\r\n'),
    ).toBe('shop.example');
    // A colon alone is no name.
    expect(await hostname(port, 'GET /h HTTP/1.1\r\nHost: b\r\nX-Forwarded-Host: :\r\n')).toBe('b');
  });
});

describe('X-Forwarded-Host / -Proto behind an appending proxy', () => {
  it('one trusted proxy: its own (last) entry, not what the client prepended', async () => {
    for (const trustProxy of [1, 'loopback', true] as const) {
      const port = await seen({ trustProxy });
      // The client sent `X-Forwarded-Host: evil.example`, `-Proto: https`, `-For: 6.6.6.6`; the
      // proxy (127.0.0.1, the TCP peer) appended what it saw.
      const head =
        'GET /h HTTP/1.1\r\nHost: origin.internal\r\n' +
        'X-Forwarded-For: 6.6.6.6, 203.0.113.7\r\n' +
        'X-Forwarded-Host: evil.example, shop.example\r\n' +
        'X-Forwarded-Proto: https, http\r\n';
      const got = await answer(port, head);
      if (trustProxy === true) {
        // `true` believes every hop: two proxies wrote X-Forwarded-For, so both entries count
        // as proxies' own (the documented reason never to use it in production).
        expect(got).toEqual({ hostname: 'evil.example', protocol: 'https', ip: '6.6.6.6' });
      } else {
        expect(got).toEqual({ hostname: 'shop.example', protocol: 'http', ip: '203.0.113.7' });
      }
    }
  });

  it('a hop count of 2: the entry the outer trusted proxy wrote', async () => {
    const port = await seen({ trustProxy: 2 });
    // CDN (trusted, saw the client 203.0.113.7 ask for shop.example over https) then the load
    // balancer (the TCP peer, saw the CDN 10.0.0.9 ask for origin.internal over http).
    const head =
      'GET /h HTTP/1.1\r\nHost: origin.internal\r\n' +
      'X-Forwarded-For: 6.6.6.6, 203.0.113.7, 10.0.0.9\r\n' +
      'X-Forwarded-Host: evil.example, shop.example, origin.internal\r\n' +
      'X-Forwarded-Proto: http, https, http\r\n';
    expect(await answer(port, head)).toEqual({
      hostname: 'shop.example',
      protocol: 'https',
      ip: '203.0.113.7',
    });
  });

  it('proxies that replace the header (one entry) are read as before', async () => {
    const port = await seen({ trustProxy: 2 });
    const head =
      'GET /h HTTP/1.1\r\nHost: origin.internal\r\n' +
      'X-Forwarded-For: 203.0.113.7, 10.0.0.9\r\n' +
      'X-Forwarded-Host: shop.example\r\nX-Forwarded-Proto: https\r\n';
    expect(await answer(port, head)).toEqual({
      hostname: 'shop.example',
      protocol: 'https',
      ip: '203.0.113.7',
    });
    // A peer that wrote no X-Forwarded-For is still one proxy: the last entry is its own.
    const bare =
      'GET /h HTTP/1.1\r\nHost: origin.internal\r\n' +
      'X-Forwarded-Host: evil.example, shop.example\r\n';
    expect(await hostname(port, bare)).toBe('shop.example');
  });
});

describe("a 405's Allow", () => {
  it('lists OPTIONS, as the 204 to OPTIONS on the same path does', async () => {
    const app = createApp();
    apps.push(app);
    app.get('/r', (ctx) => ctx.send('r'));
    app.post('/r', (ctx) => ctx.send('r'));
    const { port } = await start(app);
    const allow = async (method: string): Promise<string> => {
      const out = await socketBytes(
        port,
        `${method} /r HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`,
        2_000,
      );
      return `${out.slice(9, 12)} ${/\r\nallow: ([^\r]*)\r\n/i.exec(out)?.[1]}`;
    };
    expect(await allow('PUT')).toBe('405 GET, POST, HEAD, OPTIONS');
    expect(await allow('OPTIONS')).toBe('204 GET, POST, HEAD, OPTIONS');
  });
});

describe('two Content-Type lines on a body keel reads', () => {
  it('different values: 400, the handler never sees the body', async () => {
    const app = createApp();
    apps.push(app);
    let runs = 0;
    app.post('/p', (ctx) => {
      runs++;
      return ctx.json({ body: ctx.body });
    });
    const { port } = await start(app);
    const post = (types: string[]): Promise<string> =>
      socketBytes(
        port,
        `POST /p HTTP/1.1\r\nHost: a\r\n${types.map((t) => `Content-Type: ${t}\r\n`).join('')}` +
          'Content-Length: 7\r\nConnection: close\r\n\r\n{"a":1}',
        2_000,
      );
    const twoTypes = await post(['application/json', 'text/plain']);
    expect(twoTypes.slice(9, 12)).toBe('400');
    expect(twoTypes).toContain('Content-Type');
    expect(runs).toBe(0);
    // Any spelling of the name counts.
    const shouted = await socketBytes(
      port,
      'POST /p HTTP/1.1\r\nHost: a\r\ncontent-type: application/json\r\n' +
        'CONTENT-TYPE: text/plain\r\nContent-Length: 7\r\nConnection: close\r\n\r\n{"a":1}',
      2_000,
    );
    expect(shouted.slice(9, 12)).toBe('400');
    expect(runs).toBe(0);
    // The same value twice says one thing.
    const same = await post(['application/json', 'application/json']);
    expect(same.slice(9, 12)).toBe('200');
    expect(same.endsWith('{"body":{"a":1}}')).toBe(true);
  });
});

describe('a GET or HEAD declaring a body over the limit', () => {
  /** Sends `head` alone; resolves with what came back and whether the server closed. */
  function headOnly(port: number, head: string): Promise<{ out: string; closed: boolean }> {
    return new Promise((resolve, reject) => {
      const s = connect(port, '127.0.0.1');
      let out = '';
      s.setEncoding('latin1');
      s.on('data', (c: string) => {
        out += c;
      });
      s.on('error', reject);
      const timer = setTimeout(() => {
        s.destroy();
        resolve({ out, closed: false });
      }, 2_000);
      s.on('close', () => {
        clearTimeout(timer);
        resolve({ out, closed: true });
      });
      s.write(head, 'latin1');
    });
  }

  it('10 GB declared: 413 at once and the connection closed, no route runs', async () => {
    const app = createApp();
    apps.push(app);
    let runs = 0;
    app.get('/h', (ctx) => {
      runs++;
      return ctx.send('h');
    });
    const { port } = await start(app);
    for (const method of ['GET', 'HEAD']) {
      const { out, closed } = await headOnly(
        port,
        `${method} /h HTTP/1.1\r\nHost: a\r\nContent-Length: 10000000000\r\n\r\n`,
      );
      expect(out.slice(9, 12)).toBe('413');
      expect(closed).toBe(true);
    }
    expect(runs).toBe(0);
  });

  it('a body refused for its headers (415, 400) declared past 16 MiB closes the connection', async () => {
    const app = createApp();
    apps.push(app);
    app.post('/p', (ctx) => ctx.json({ body: ctx.body }));
    const { port } = await start(app);
    const encoded = await headOnly(
      port,
      'POST /p HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n' +
        'Content-Encoding: gzip\r\nContent-Length: 10000000000\r\n\r\n',
    );
    expect(encoded.out.slice(9, 12)).toBe('415');
    expect(encoded.closed).toBe(true);
    const twoTypes = await headOnly(
      port,
      'POST /p HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n' +
        'Content-Type: text/plain\r\nContent-Length: 10000000000\r\n\r\n',
    );
    expect(twoTypes.out.slice(9, 12)).toBe('400');
    expect(twoTypes.closed).toBe(true);
  });

  it("a GET body under the route's bodyLimit is ignored; one over it is 413 and drained", async () => {
    const app = createApp();
    apps.push(app);
    app.get('/h', (ctx) => ctx.json({ body: ctx.body ?? null }));
    app.get('/tiny', { bodyLimit: 4 }, (ctx) => ctx.send('tiny'));
    const { port } = await start(app);
    const statuses = async (bytes: string): Promise<string[]> =>
      [...(await socketBytes(port, bytes, 5_000)).matchAll(/HTTP\/1\.1 (\d{3})/g)].map(
        (m) => m[1]!,
      );
    // Ignored (ctx.body stays undefined), and the connection goes on.
    expect(
      await statuses(
        'GET /h HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello' +
          'GET /h HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n',
      ),
    ).toEqual(['200', '200']);
    // The route's own limit counts.
    expect(
      await statuses(
        'GET /tiny HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello' +
          'GET /tiny HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n',
      ),
    ).toEqual(['413', '200']);
    // 2 MiB over the default 1 MiB: refused, drained (the client reads the 413), still usable.
    const big = 2 * 1024 * 1024;
    expect(
      await statuses(
        `GET /h HTTP/1.1\r\nHost: a\r\nContent-Length: ${big}\r\n\r\n${'x'.repeat(big)}` +
          'GET /h HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n',
      ),
    ).toEqual(['413', '200']);
  });
});
