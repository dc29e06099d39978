// The README promises cors()'s headers on every response, errors included, "so a page can read a
// 404 or a 500". A body the reader refused (400 malformed JSON, 400 __proto__, 413 too large, 415
// compressed) was answered before any middleware ran: no Access-Control-Allow-Origin, so the
// page saw a CORS failure instead of the 400 / 413 it could have shown, and logging middleware
// never saw the request. The chain now runs for them with a final handler that throws the body's
// error, as for a 404 or 405.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, cors, createApp } from '../../src/index';
import { raw, start } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

const ORIGIN = 'https://app.example';
let app: App;
let port: number;
const seen: string[] = [];
let handled = 0;

beforeAll(async () => {
  app = createApp({ bodyLimit: 100 });
  app.use(cors({ origin: [ORIGIN] }));
  app.use(async (ctx, next) => {
    seen.push(`${ctx.method} ${ctx.path}`);
    await next();
  });
  app.post('/items', (ctx) => {
    handled++;
    return ctx.json(ctx.body);
  });
  ({ port } = await start(app));
});

afterAll(() => app.close());

function post(body: string, headers: Record<string, string> = {}) {
  return raw(port, {
    method: 'POST',
    path: '/items',
    headers: { origin: ORIGIN, 'content-type': 'application/json', ...headers },
    body,
  });
}

describe('cors headers on refused bodies', () => {
  it.each([
    ['malformed JSON', '{"a":', {}, 400],
    ['a __proto__ key', '{"__proto__": {"x": 1}}', {}, 400],
    ['over bodyLimit', JSON.stringify({ a: 'x'.repeat(200) }), {}, 413],
    ['gzip-encoded', '{}', { 'content-encoding': 'gzip' }, 415],
  ] as const)(
    '%s: %s answered with Access-Control-Allow-Origin',
    async (_, body, headers, status) => {
      seen.length = 0;
      handled = 0;
      const res = await post(body, headers);
      expect(res.status).toBe(status);
      expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
      expect(res.headers.vary).toContain('Origin');
      expect(seen).toEqual(['POST /items']);
      expect(handled).toBe(0); // the route's handler never runs with a refused body
      expect(JSON.parse(res.body).status).toBe(status);
    },
  );

  it('a good body still reaches the handler, once', async () => {
    handled = 0;
    const res = await post('{"a":1}');
    expect(res.status).toBe(200);
    expect(res.body).toBe('{"a":1}');
    expect(handled).toBe(1);
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
  });

  it('the connection stays usable after a 413 (the rest is drained as before)', async () => {
    const res = await post(JSON.stringify({ a: 'x'.repeat(5000) }));
    expect(res.status).toBe(413);
    expect((await post('{"b":2}')).body).toBe('{"b":2}');
  });
});
