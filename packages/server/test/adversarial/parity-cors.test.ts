// Parity with Fastify / Hono / Express: cors(). Attacker angle: an origin that is not allowed,
// '*' with credentials, header names smuggled through options.
import { describe, expect, it } from 'vitest';
import { cors, createApp, HttpException } from '../../src/index';
import { guardProcess } from './harness';

guardProcess();

function make(options: Parameters<typeof cors>[0]) {
  const app = createApp();
  app.use(cors(options));
  app.get('/data', (ctx) => ctx.json({ ok: true }));
  app.get('/fail', () => {
    throw new HttpException(403, 'no');
  });
  return app;
}

describe('cors()', () => {
  it("origin '*': any origin, no Vary; requests without Origin are untouched", async () => {
    const app = make({});
    const res = await app.inject({ url: '/data', headers: { origin: 'https://a.example' } });
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers.vary).toBeUndefined();
    const plain = await app.inject({ url: '/data' });
    expect(plain.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('a list echoes an allowed origin with Vary: Origin, and refuses others', async () => {
    const app = make({
      origin: ['https://a.example'],
      credentials: true,
      exposedHeaders: ['x-total'],
    });
    const ok = await app.inject({ url: '/data', headers: { origin: 'https://a.example' } });
    expect(ok.headers['access-control-allow-origin']).toBe('https://a.example');
    expect(ok.headers['access-control-allow-credentials']).toBe('true');
    expect(ok.headers['access-control-expose-headers']).toBe('x-total');
    expect(ok.headers.vary).toBe('Origin');
    const other = await app.inject({ url: '/data', headers: { origin: 'https://evil.example' } });
    expect(other.status).toBe(200);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    expect(other.headers.vary).toBe('Origin');
    // Error responses carry the headers too, so the page can read them.
    const failed = await app.inject({ url: '/fail', headers: { origin: 'https://a.example' } });
    expect(failed.status).toBe(403);
    expect(failed.headers['access-control-allow-origin']).toBe('https://a.example');
  });

  it('answers a preflight with 204 and does not reach the routes', async () => {
    let reached = false;
    const app = make({ origin: /\.example$/, methods: ['GET', 'POST'], maxAge: 600 });
    app.options('/data', (ctx) => {
      reached = true;
      return ctx.send('route');
    });
    const res = await app.inject({
      method: 'OPTIONS',
      url: '/data',
      headers: {
        origin: 'https://b.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, x-token',
      },
    });
    expect(res.status).toBe(204);
    expect(reached).toBe(false);
    expect(res.headers['access-control-allow-origin']).toBe('https://b.example');
    expect(res.headers['access-control-allow-methods']).toBe('GET, POST');
    expect(res.headers['access-control-allow-headers']).toBe('content-type, x-token');
    expect(res.headers['access-control-max-age']).toBe('600');
    expect(res.headers.vary).toBe('Origin, Access-Control-Request-Headers');
    // A refused origin gets a 204 without the allow headers: the browser blocks the request.
    const refused = await app.inject({
      method: 'OPTIONS',
      url: '/data',
      headers: { origin: 'https://evil.test', 'access-control-request-method': 'POST' },
    });
    expect(refused.status).toBe(204);
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
    // A plain OPTIONS (no Access-Control-Request-Method) reaches the route.
    expect((await app.inject({ method: 'OPTIONS', url: '/data' })).body).toBe('route');
  });

  it('a function decides per request; bad options throw', async () => {
    const app = make({
      origin: (origin, ctx) => origin.endsWith('.test') && ctx.path === '/data',
      allowedHeaders: ['content-type'],
    });
    const res = await app.inject({ url: '/data', headers: { origin: 'http://x.test' } });
    expect(res.headers['access-control-allow-origin']).toBe('http://x.test');
    expect(() => cors({ origin: '*', credentials: true })).toThrow(RangeError);
    expect(() => cors({ methods: ['GET\r\nX: 1'] })).toThrow(RangeError);
    expect(() => cors({ maxAge: -5 })).toThrow(RangeError);
    expect(() => cors({ origin: 5 as never })).toThrow(TypeError);
  });
});
