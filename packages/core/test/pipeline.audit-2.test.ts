/**
 * Black-box audit of the request pipeline, round 2 (round 1: pipeline.audit.test.ts): what fetch
 * is handed (headers it may change, form bodies under a client-wide Content-Type), the target of
 * a mutation's `invalidate` event, and `client.on` with a name that is no event. Through the
 * client against a real loopback server (also run against the composed client by core-composed).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ClientEvents, ClientOptions, FetchLike } from '../src/index';
import {
  ALL_EVENTS,
  createTestClient,
  debugOf,
  recordEvents,
  startServer,
  type TestServer,
} from './helpers';

let server: TestServer;
/** Attempts per `/flaky` path: the first answers 503, the next 200. */
const flaky = new Map<string, number>();

function json(res: ServerResponse, data: unknown, status = 200): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(data));
}

/** The request as the server read it: headers, and its body parsed by its Content-Type. */
async function parsed(req: IncomingMessage) {
  const headers = new Headers(req.headers as Record<string, string>);
  const read = req.method !== 'GET' && req.method !== 'HEAD';
  const request = new Request('http://loopback.test/', {
    method: req.method,
    headers,
    body: read ? (Readable.toWeb(req) as ReadableStream) : undefined,
    duplex: 'half',
  } as RequestInit);
  const type = headers.get('content-type') ?? '';
  let form: [string, string][] | undefined;
  let text: string | undefined;
  if (type.startsWith('multipart/form-data') || type.startsWith('application/x-www-form')) {
    // A real multipart / urlencoded parser (undici's): it needs the boundary fetch wrote.
    const data = await request.formData().catch(() => undefined);
    form = data && [...data].map(([name, value]) => [name, String(value)]);
  } else text = await request.text();
  return { headers: { ...req.headers }, form, text };
}

beforeAll(async () => {
  const echo = async (req: IncomingMessage, res: ServerResponse) => json(res, await parsed(req));
  server = await startServer({
    '/echo': echo,
    '/auth/me': echo,
    '/plain': echo,
    '/form': echo,
    '/users': echo,
    '/users/7': echo,
    '/feed': echo,
    '/other': echo,
    '/flaky': async (req, res) => {
      const seenReq = await parsed(req);
      const n = (flaky.get(req.url!) ?? 0) + 1;
      flaky.set(req.url!, n);
      json(res, seenReq, n === 1 ? 503 : 200);
    },
  });
});

afterAll(() => server.close());

function client(options: ClientOptions = {}) {
  return createTestClient({ baseURL: server.url, ...options });
}

type Echo = {
  headers: Record<string, string>;
  form?: [string, string][];
  text?: string;
};

// ── the headers fetch is handed ─────────────────────────────────────────────────────────────

describe('headers a custom fetch changes', () => {
  /** A fetch that adds a header to `init.headers` in place, as interceptors do. */
  const addingHeader =
    (name: string, value: () => string): FetchLike =>
    (url, init) => {
      (init!.headers as Record<string, string>)[name] = value();
      return fetch(url, init);
    };

  test("an added header does not leak into the client's defaults, later requests or resolve()", async () => {
    const auth: FetchLike = (url, init) => {
      if (String(url).includes('/auth/')) {
        (init!.headers as Record<string, string>).authorization = 'Bearer t';
      }
      return fetch(url, init);
    };
    const c = client({ headers: { 'x-app': 'a' }, fetch: auth, cache: false });
    const me = await c.get<Echo>('/auth/me');
    expect(me.data.headers).toMatchObject({ 'x-app': 'a', authorization: 'Bearer t' });
    const plain = await c.get<Echo>('/plain');
    expect(plain.data.headers['x-app']).toBe('a');
    expect(plain.data.headers.authorization).toBeUndefined();
    expect(c.resolve('GET', '/plain').headers).toEqual({ 'x-app': 'a' });
  });

  test('a client without headers: fetch may add one (the headers it gets are not frozen)', async () => {
    const c = client({ fetch: addingHeader('x-trace', () => 't1'), retry: false });
    const res = await c.get<Echo>('/echo');
    expect(res.data.headers['x-trace']).toBe('t1');
    expect(c.resolve('GET', '/echo').headers).toEqual({});
  });

  test("each attempt gets the request's own headers, not those the previous attempt changed", async () => {
    const hop: FetchLike = (url, init) => {
      const headers = init!.headers as Record<string, string>;
      headers['x-hop'] = `${headers['x-hop'] ?? ''}+`;
      return fetch(url, init);
    };
    const c = client({ fetch: hop, retry: { attempts: 2, baseDelay: 1, jitter: false } });
    const res = await c.get<Echo>('/flaky?h=1', { headers: { 'x-hop': 'h' } });
    expect(res.status).toBe(200);
    expect(flaky.get('/flaky?h=1')).toBe(2);
    expect(res.data.headers['x-hop']).toBe('h+');
  });
});

// ── form bodies under a client-wide Content-Type ────────────────────────────────────────────

describe('form bodies and a client-wide Content-Type', () => {
  const JSON_CLIENT = { headers: { 'Content-Type': 'application/json' } };

  test('FormData: fetch writes multipart with its boundary; the server parses every field', async () => {
    const c = client(JSON_CLIENT);
    const form = new FormData();
    form.append('name', 'Ada');
    form.append('file', new Blob(['hello'], { type: 'text/plain' }), 'a.txt');
    const res = await c.post<Echo>('/form', form);
    expect(res.data.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(res.data.form).toEqual([
      ['name', 'Ada'],
      ['file', '[object File]'],
    ]);
  });

  test('URLSearchParams: sent urlencoded, not as the client-wide JSON type', async () => {
    const c = client(JSON_CLIENT);
    const res = await c.put<Echo>('/form', new URLSearchParams({ a: '1', b: 'x y' }));
    expect(res.data.headers['content-type']).toMatch(/^application\/x-www-form-urlencoded/);
    expect(res.data.form).toEqual([
      ['a', '1'],
      ['b', 'x y'],
    ]);
  });

  test("a JSON body keeps the client's Content-Type, and a request's own Content-Type wins", async () => {
    const c = client({ headers: { 'content-type': 'application/vnd.api+json' } });
    const body = await c.post<Echo>('/echo', { a: 1 });
    expect(body.data.headers['content-type']).toBe('application/vnd.api+json');
    expect(body.data.text).toBe('{"a":1}');
    const own = await c.post<Echo>('/echo', new URLSearchParams({ a: '1' }), {
      headers: { 'content-type': 'text/plain' },
    });
    expect(own.data.headers['content-type']).toBe('text/plain');
    expect(own.data.text).toBe('a=1');
  });
});

// ── the invalidate event of a mutation ──────────────────────────────────────────────────────

describe("a mutation's invalidate event", () => {
  test('without tags: its target is the path', async () => {
    const c = client();
    await c.get('/users');
    const rec = recordEvents(c, ['invalidate']);
    await c.post('/users', { a: 1 });
    expect(rec.events.map((e) => e.payload)).toEqual([
      { keys: [c.resolve('GET', '/users').key], target: '/users' },
    ]);
  });

  test('with tags: its target is the path joined with the tags, and it removed by either', async () => {
    const c = client();
    await Promise.all([
      c.get('/users'),
      c.get('/users/7'),
      c.get('/feed', { tags: ['people'] }),
      c.get('/other', { tags: ['other'] }),
    ]);
    const rec = recordEvents(c, ['invalidate']);
    await c.post('/users', { a: 1 }, { tags: ['people'] });
    expect(rec.events).toHaveLength(1);
    const { keys, target } = rec.events[0]!.payload as ClientEvents['invalidate'];
    const key = (path: string) => c.resolve('GET', path).key;
    expect([...keys].sort()).toEqual([key('/users'), key('/users/7'), key('/feed')].sort());
    expect(target).toEqual(['/users', 'people']);
    expect(c.getCached(key('/other'))).toBeDefined();
  });
});

// ── client.on with a name that is no event ──────────────────────────────────────────────────

describe('client.on event names', () => {
  test('an unknown event name is a RangeError naming it; a non-string a TypeError', () => {
    const c = client();
    expect(() => c.on('typo' as never, () => {})).toThrow(RangeError);
    expect(() => c.on('typo' as never, () => {})).toThrow(
      /keel: `event` must be one of .*got "typo"/,
    );
    expect(() => c.on(5 as never, () => {})).toThrow(TypeError);
    expect(debugOf(c).listeners).toBe(0);
  });

  test('every event the client emits is accepted', () => {
    const c = client();
    const offs = ALL_EVENTS.map((name) => c.on(name, () => {}));
    expect(debugOf(c).listeners).toBe(ALL_EVENTS.length);
    for (const off of offs) off();
    expect(debugOf(c).listeners).toBe(0);
  });
});
