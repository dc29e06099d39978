import { describe, expect, test } from 'vitest';
import { raw, socketBytes, start, trackApps } from '../helpers';

// A header given as an array to `app.inject` stands for that header's lines sent repeatedly, as
// `node:http` sends an array. A test through inject must see what the socket gives the same
// handler: light-my-request alone joined the values with ',' (Cookie `a=1,b=2` read as one
// cookie `a` = `1,b=2`; two Host values became one syntactically valid host that routed).
const makeApp = trackApps();

function echoApp() {
  const app = makeApp({ trustProxy: true });
  app.get('/', (ctx) =>
    ctx.json({
      a: ctx.cookie('a') ?? null,
      b: ctx.cookie('b') ?? null,
      ips: ctx.ips,
      accept: ctx.header('accept') ?? null,
    }),
  );
  return app;
}

describe('app.inject: a header given as an array is its lines sent repeatedly', () => {
  test.each([
    ['cookie', ['a=1', 'b=2']],
    ['x-forwarded-for', ['203.0.113.1', '198.51.100.2']],
    ['accept', ['text/html', 'application/json']],
  ])('%s: inject and a real socket agree', async (name, values) => {
    const app = echoApp();
    const injected = await app.inject({ url: '/', headers: { [name]: values } });
    const { port } = await start(app);
    const wire = await raw(port, { path: '/', headers: { [name]: values } });
    expect(wire.status).toBe(200);
    expect(injected.status).toBe(200);
    expect(injected.json()).toEqual(JSON.parse(wire.body));
  });

  test('two cookie lines are two cookies', async () => {
    const injected = await echoApp().inject({ url: '/', headers: { cookie: ['a=1', 'b=2'] } });
    expect(injected.json()).toMatchObject({ a: '1', b: '2' });
  });

  test('two Host values are refused, as two Host lines on a socket are', async () => {
    const app = echoApp();
    const injected = await app.inject({ url: '/', headers: { host: ['a.example', 'b.example'] } });
    expect(injected.status).toBe(400);
    expect(injected.json()).toMatchObject({ status: 400, error: 'Bad Request' });
    const { port } = await start(app);
    const wire = await socketBytes(
      port,
      'GET / HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\nConnection: close\r\n\r\n',
    );
    expect(wire).toMatch(/^HTTP\/1\.1 400 /);
  });

  test('one value in an array is that value', async () => {
    const app = echoApp();
    const injected = await app.inject({
      url: '/',
      headers: { host: ['a.example'], cookie: ['a=1'] },
    });
    expect(injected.status).toBe(200);
    expect(injected.json()).toMatchObject({ a: '1', b: null });
  });
});
