// GraphQL-over-HTTP request forms on a listening app: which Content-Types a POST may use (one
// check, the body reader's), and empty `operationName` / `variables` parameters (the spec: on GET
// the empty string is the parameter omitted; graphql-http and graphql-js keep a JSON body's `""`).
import { afterEach, describe, expect, it } from 'vitest';
import { type App, createApp } from '../src/index';
import { raw, start } from './helpers';

const apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close({ timeoutMs: 100 })));
});

const schema = 'type Query { hello(name: String): String! } type Mutation { bump: Int! }';

async function serve(): Promise<{ port: number; bumps: () => number }> {
  let bumps = 0;
  const app = createApp();
  apps.push(app);
  app.all('/graphql', (ctx) =>
    ctx.graphql(schema, {
      Query: { hello: (_: unknown, args: { name?: string }) => `hi ${args.name ?? 'you'}` },
      Mutation: { bump: () => ++bumps },
    }),
  );
  return { port: (await start(app)).port, bumps: () => bumps };
}

function post(port: number, type: string, body: unknown) {
  return raw(port, {
    method: 'POST',
    path: '/graphql',
    headers: { 'content-type': type },
    body: JSON.stringify(body),
  });
}

function get(port: number, search: string) {
  return raw(port, { path: `/graphql?${search}` });
}

const errorOf = (body: string): string =>
  (JSON.parse(body) as { errors: { message: string }[] }).errors[0]!.message;

describe('GraphQL POST Content-Type', () => {
  it.each([
    'application/json',
    'Application/JSON',
    'APPLICATION/JSON; CHARSET=UTF-8',
    'Application/JSON ; charset=UTF-8',
    'application/json;charset="utf-8"',
    'application/json\t;\tcharset=utf-8',
    'application/json; foo=bar; charset=utf-8',
  ])('%j runs the operation', async (type) => {
    const { port, bumps } = await serve();
    const res = await post(port, type, { query: 'mutation { bump }' });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ data: { bump: 1 } });
    expect(bumps()).toBe(1);
  });

  // The spec names application/json the one request type (application/graphql-response+json is
  // a response type, sent in Accept); graphql-http answers 415 to any other. JSON the body reader
  // parses (`+json`) is no GraphQL request for that.
  it.each([
    'application/graphql-response+json',
    'application/graphql+json',
    'application/jsonx',
    'application/json-seq',
    'text/json',
    'application/x-json',
    'application',
    'application/json\u00a0',
    'json',
  ])('%j is a 415 and nothing runs', async (type) => {
    const { port, bumps } = await serve();
    const res = await post(port, type, { query: 'mutation { bump }' });
    expect(res.status).toBe(415);
    expect(errorOf(res.body)).toBe('GraphQL POST requests must be sent as application/json.');
    expect(bumps()).toBe(0);
  });
});

// One media-type check: a Content-Type GraphQL refuses as no application/json is no JSON for the
// body reader either (JS trim() would drop a no-break space, HTTP's OWS is spaces and tabs).
describe('the body reader agrees with GraphQL on the media type', () => {
  async function echo(): Promise<number> {
    const app = createApp();
    apps.push(app);
    app.post('/echo', (ctx) => ctx.json({ body: ctx.body ?? null }));
    return (await start(app)).port;
  }
  const send = (port: number, type: string) =>
    raw(port, {
      method: 'POST',
      path: '/echo',
      headers: { 'content-type': type },
      body: '{"a":1}',
    });

  it.each([
    'application/json\u00a0',
    '\u00a0application/json',
    'application/ld+json\u00a0',
    'application/x-www-form-urlencoded\u00a0',
  ])('%j is not read (no parser takes it)', async (type) => {
    const port = await echo();
    const res = await send(port, type);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ body: null });
  });

  it.each(['application/json', ' Application/JSON\t; charset=utf-8', 'application/ld+json '])(
    '%j is read as JSON',
    async (type) => {
      const port = await echo();
      const res = await send(port, type);
      expect(JSON.parse(res.body)).toEqual({ body: { a: 1 } });
    },
  );
});

describe('empty GraphQL parameters', () => {
  it('GET `operationName=` is the parameter omitted (GraphQL over HTTP, GET)', async () => {
    const { port } = await serve();
    const res = await get(port, `query=${encodeURIComponent('{ hello }')}&operationName=`);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ data: { hello: 'hi you' } });
  });

  it('GET `operationName=` with several operations still needs a name', async () => {
    const { port } = await serve();
    const q = encodeURIComponent('query A { hello } query B { hello(name: "b") }');
    const res = await get(port, `query=${q}&operationName=`);
    expect(res.status).toBe(400);
    expect(errorOf(res.body)).toBe(
      'Must provide operation name if query contains multiple operations.',
    );
  });

  // Every miss was "Could not determine which operation to run.", which hid a misspelt name.
  it('an operationName the document does not hold is named in the error, as graphql-js words it', async () => {
    const { port } = await serve();
    const q = encodeURIComponent('query A { hello }');
    const res = await get(port, `query=${q}&operationName=Nope`);
    expect(res.status).toBe(400);
    expect(errorOf(res.body)).toBe('Unknown operation named "Nope".');
  });

  it('GET `variables=` is the parameter omitted (as graphql-http reads it)', async () => {
    const { port } = await serve();
    const q = encodeURIComponent('query ($n: String) { hello(name: $n) }');
    const res = await get(port, `query=${q}&variables=`);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ data: { hello: 'hi you' } });
    const both = await get(port, `query=${q}&variables=&operationName=`);
    expect(JSON.parse(both.body)).toEqual({ data: { hello: 'hi you' } });
  });

  it('GET `variables` that is not empty is still read as JSON', async () => {
    const { port } = await serve();
    const q = encodeURIComponent('query ($n: String) { hello(name: $n) }');
    const bad = await get(port, `query=${q}&variables=%20`);
    expect(bad.status).toBe(400);
    expect(errorOf(bad.body)).toBe('Variables are invalid JSON.');
  });

  it('a JSON body\'s `operationName: ""` is a 400 that names it (graphql-js, graphql-http)', async () => {
    const { port, bumps } = await serve();
    const res = await post(port, 'application/json', {
      query: 'mutation { bump }',
      operationName: '',
    });
    expect(res.status).toBe(400);
    expect(errorOf(res.body)).toBe(
      'operationName is the empty string, which names no operation: omit it or send null.',
    );
    expect(bumps()).toBe(0);
    const nul = await post(port, 'application/json', {
      query: 'mutation { bump }',
      operationName: null,
    });
    expect(JSON.parse(nul.body)).toEqual({ data: { bump: 1 } });
  });

  it('a JSON body\'s `variables: ""` stays a 400 (a JSON body\'s variables are an object)', async () => {
    const { port } = await serve();
    const res = await post(port, 'application/json', { query: '{ hello }', variables: '' });
    expect(res.status).toBe(400);
    expect(errorOf(res.body)).toBe('Variables are invalid JSON.');
  });
});

// GraphQL over HTTP: `extensions` is a map (graphql-http answers any other value 400, and its
// audits expect it). keel has no use for one: an object is accepted and ignored.
describe('GraphQL `extensions`', () => {
  it.each([
    ['a string', 'x'],
    ['a JSON string of an object', '{"a":1}'],
    ['a number', 1],
    ['a boolean', true],
    ['an array', [{ a: 1 }]],
  ])('POST with %s is a 400 and nothing runs', async (_, extensions) => {
    const { port, bumps } = await serve();
    const res = await post(port, 'application/json', { query: 'mutation { bump }', extensions });
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(errorOf(res.body)).toBe('Extensions must be an object.');
    expect(bumps()).toBe(0);
  });

  it.each([
    ['an object', { persistedQuery: { version: 1 } }],
    ['an empty object', {}],
    ['null', null],
  ])('POST with %s runs the operation (extensions ignored)', async (_, extensions) => {
    const { port, bumps } = await serve();
    const res = await post(port, 'application/json', { query: 'mutation { bump }', extensions });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(res.body)).toEqual({ data: { bump: 1 } });
    expect(bumps()).toBe(1);
  });

  it('GET reads `extensions` as JSON, as `variables`', async () => {
    const { port } = await serve();
    const q = `query=${encodeURIComponent('{ hello }')}`;
    const ok = await get(port, `${q}&extensions=${encodeURIComponent('{"a":{"b":1}}')}`);
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toEqual({ data: { hello: 'hi you' } });
    expect((await get(port, `${q}&extensions=`)).status).toBe(200); // empty: omitted
    for (const [value, message] of [
      ['%5B1%5D', 'Extensions must be an object.'],
      ['1', 'Extensions must be an object.'],
      ['%22x%22', 'Extensions must be an object.'],
      ['x', 'Extensions are invalid JSON.'],
      [
        encodeURIComponent('{"__proto__":{"x":1}}'),
        'Extensions have a forbidden __proto__ or constructor.prototype key.',
      ],
    ] as const) {
      const res = await get(port, `${q}&extensions=${value}`);
      expect(res.status, value).toBe(400);
      expect(errorOf(res.body), value).toBe(message);
    }
    const twice = await get(port, `${q}&extensions=%7B%7D&extensions=%7B%7D`);
    expect(twice.status).toBe(400);
    expect(errorOf(twice.body)).toBe('Extensions must be an object.');
  });
});
