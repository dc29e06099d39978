// Request targets that start with `*`: only `*` alone is the asterisk-form (RFC 9112 §3.2.4,
// OPTIONS only); `*foo`, `*/x`, `**` are no target at all and must be a 400 whatever the method
// and the routes, never routed, never answered with an Allow list of the routes.
import { describe, expect, it } from 'vitest';
import type { App } from '../../src/index';
import { socketBytes, start, trackApps } from '../helpers';
import { guardProcess } from './harness';

guardProcess();
const make = trackApps();

const ROUTES: Record<string, (app: App, seen: string[]) => void> = {
  'no routes': () => {},
  'GET /x': (app, seen) => app.get('/x', (ctx) => void seen.push(ctx.path)),
  'GET /:name': (app, seen) => app.get('/:name', (ctx) => void seen.push(ctx.path)),
  'GET /*': (app, seen) => app.get('/*', (ctx) => void seen.push(ctx.path)),
  'ALL *': (app, seen) => app.all('*', (ctx) => void seen.push(ctx.path)),
};

describe('request targets starting with *', () => {
  for (const [name, route] of Object.entries(ROUTES)) {
    it(`are a 400 for every method, never routed (${name})`, async () => {
      const app = make();
      const seen: string[] = [];
      route(app, seen);
      app.get('/ping', (ctx) => ctx.send('pong'));
      const { port } = await start(app);
      for (const target of ['*foo', '*/x', '**', '*?a=1', '*%2F']) {
        for (const method of ['OPTIONS', 'GET', 'HEAD', 'POST', 'DELETE']) {
          const out = await socketBytes(
            port,
            `${method} ${target} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
          );
          expect(out, `${method} ${target}`).toMatch(/^HTTP\/1\.1 400 /);
          expect(out, `${method} ${target}`).not.toMatch(/\r\nallow:/i);
        }
      }
      expect(seen).toEqual([]);
      // `*` alone is still the asterisk-form, and the server still serves.
      const star = await socketBytes(
        port,
        'OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      );
      expect(star).toMatch(/^HTTP\/1\.1 204 /);
      const ping = await socketBytes(
        port,
        'GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      );
      expect(ping).toMatch(/^HTTP\/1\.1 200 [\s\S]*pong$/);
    });
  }
});
