// Request-edge cases sent as raw bytes to `app.listen()`: host names a careful server takes
// (a trailing-dot FQDN, Docker service names with `_`), forwarding headers a client prepends to
// behind an appending proxy, the `Allow` of a 405, two different Content-Type lines on a body,
// and a GET declaring a body far larger than any route reads.
import { afterEach, describe, expect, it } from 'vitest';
import { type App, type CreateAppOptions, createApp } from '../../src/index';
import { socketBytes, start } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

const apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close({ timeoutMs: 100 })));
});

async function seen(options: CreateAppOptions = {}): Promise<number> {
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
    // Still refused: what a host name never holds.
    expect(await hostname(port, 'GET /h HTTP/1.1\r\nHost: a b\r\n')).toBe('');
    expect(await hostname(port, 'GET /h HTTP/1.1\r\nHost: -a.example\r\n')).toBe('');
    expect(await hostname(port, 'GET /h HTTP/1.1\r\nHost: a.example-\r\n')).toBe('');
  });
});
