// Spec 001 ctx.validate and ctx.graphql rows, "Errors" (BadRequestError, HTTP 400, structured),
// issue #10 items 3, 4 and 7. The body structure is "not shown" in the spec: the README's
// `{ status, error, message, fields: [{ field, rule, message }] }` is what is pinned.
import { describe, expect, it } from 'vitest';
import { createApp, isBadRequestError } from '../../src/index';
import { call, postJson, serve } from './helpers';

const rules = {
  name: { type: 'string', required: true, min: 2 },
  email: { type: 'email', required: true },
} as const;

describe('spec 001 ctx.validate', () => {
  it('validates the request body and returns the validated data', async () => {
    const app = createApp();
    app.post('/u', (ctx) => ctx.json(ctx.validate(rules)));
    const port = await serve(app);
    const r = await postJson(port, '/u', { name: 'Ann', email: 'ann@example.com', extra: 1 });
    expect(r.status).toBe(200);
    // README: only the declared fields are returned.
    expect(r.json()).toEqual({ name: 'Ann', email: 'ann@example.com' });
  });

  it('validates query parameters when there is no body', async () => {
    const app = createApp();
    app.get('/q', (ctx) => ctx.json(ctx.validate({ name: { type: 'string', required: true } })));
    const port = await serve(app);
    expect((await call(port, { path: '/q?name=Bo' })).json()).toEqual({ name: 'Bo' });
    expect((await call(port, { path: '/q' })).status).toBe(400);
  });

  it('validates path parameters', async () => {
    const app = createApp();
    app.get('/p/:slug', (ctx) =>
      ctx.json(ctx.validate({ slug: { type: 'string', required: true, min: 3 } })),
    );
    const port = await serve(app);
    expect((await call(port, { path: '/p/abc' })).json()).toEqual({ slug: 'abc' });
    expect((await call(port, { path: '/p/ab' })).status).toBe(400);
  });

  it('validates targetData when given, not the request', async () => {
    const app = createApp();
    app.post('/t', (ctx) => ctx.json(ctx.validate(rules, { name: 'Zed', email: 'z@ex.org' })));
    const port = await serve(app);
    const r = await postJson(port, '/t', { name: '', email: 'bad' });
    expect(r.status).toBe(200);
    expect(r.json()).toEqual({ name: 'Zed', email: 'z@ex.org' });
  });

  it('Errors table: invalid input is BadRequestError, HTTP 400, structured (every failing field, README shape)', async () => {
    const app = createApp();
    let thrown: unknown;
    app.post('/u', (ctx) => {
      try {
        return ctx.json(ctx.validate(rules));
      } catch (e) {
        thrown = e;
        throw e;
      }
    });
    const port = await serve(app);
    const r = await postJson(port, '/u', { name: 'A', email: 'not-an-email' });
    expect(isBadRequestError(thrown)).toBe(true);
    expect(r.status).toBe(400);
    expect(r.json()).toEqual({
      status: 400,
      error: 'Bad Request',
      message: 'Validation failed',
      fields: [
        { field: 'name', rule: 'min', message: expect.any(String) },
        { field: 'email', rule: 'type', message: expect.any(String) },
      ],
    });
  });

  it('rule required: a missing field fails with rule "required"', async () => {
    const app = createApp();
    app.post('/u', (ctx) => ctx.json(ctx.validate(rules)));
    const port = await serve(app);
    const r = await postJson(port, '/u', { email: 'a@b.co' });
    expect(r.status).toBe(400);
    expect((r.json() as { fields: unknown[] }).fields).toEqual([
      { field: 'name', rule: 'required', message: expect.any(String) },
    ]);
  });

  it('rule type string: a number is not a string', async () => {
    const app = createApp();
    app.post('/u', (ctx) => ctx.json(ctx.validate({ name: { type: 'string' } })));
    const port = await serve(app);
    const r = await postJson(port, '/u', { name: 12 });
    expect(r.status).toBe(400);
    expect((r.json() as { fields: { rule: string }[] }).fields[0]?.rule).toBe('type');
  });

  it('issue #10 item 4: a 1 MiB digit string for a number rule is refused (length cap), the loop stays free', async () => {
    const app = createApp({ bodyLimit: 4 * 1024 * 1024 });
    app.post('/n', (ctx) => ctx.json(ctx.validate({ age: { type: 'number' } })));
    app.get('/ping', (ctx) => ctx.send('pong'));
    const port = await serve(app);
    const big = '9'.repeat(1024 * 1024);
    const r = await postJson(port, '/n', { age: big });
    expect(r.status).toBe(400);
    expect((r.json() as { fields: { rule: string }[] }).fields[0]?.rule).toBe('type');
    expect((await call(port, { path: '/ping' })).text).toBe('pong');
  });
});

const schema = /* GraphQL */ `
  type Query { hello(name: String): String, me: User }
  type User { id: ID!, friends: [User!]! }
  type Mutation { add(a: Int!, b: Int!): Int }
`;
const user = (id: number): unknown => ({ id, friends: () => [user(id + 1)] });
const resolvers = {
  Query: {
    hello: (_: unknown, { name }: { name?: string }) => `hi ${name ?? 'you'}`,
    me: () => user(1),
  },
  Mutation: { add: (_: unknown, { a, b }: { a: number; b: number }) => a + b },
};

describe('spec 001 ctx.graphql', () => {
  function gqlApp(options: Parameters<typeof createApp>[0] = {}) {
    const app = createApp(options);
    app.get('/graphql', (ctx) => ctx.graphql(schema, resolvers));
    app.post('/graphql', (ctx) => ctx.graphql(schema, resolvers));
    return app;
  }

  it('evaluates a query payload (POST JSON) against the schema and resolvers', async () => {
    const port = await serve(gqlApp());
    const r = await postJson(port, '/graphql', {
      query: 'query($n: String) { hello(name: $n) }',
      variables: { n: 'Ada' },
    });
    expect(r.status).toBe(200);
    expect(r.json()).toEqual({ data: { hello: 'hi Ada' } });
  });

  it('evaluates a mutation payload', async () => {
    const port = await serve(gqlApp());
    const r = await postJson(port, '/graphql', { query: 'mutation { add(a: 2, b: 3) }' });
    expect(r.json()).toEqual({ data: { add: 5 } });
  });

  it('evaluates a query sent over GET (README)', async () => {
    const port = await serve(gqlApp());
    const r = await call(port, { path: `/graphql?query=${encodeURIComponent('{ hello }')}` });
    expect(r.json()).toEqual({ data: { hello: 'hi you' } });
  });

  it('issue #10 item 7: a mutation as an HTML form POST does not run (415, CSRF)', async () => {
    const app = createApp();
    let ran = 0;
    app.post('/graphql', (ctx) => ctx.graphql(schema, { Mutation: { add: () => ++ran } }));
    const port = await serve(app);
    const r = await call(port, {
      method: 'POST',
      path: '/graphql',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `query=${encodeURIComponent('mutation { add(a: 1, b: 1) }')}`,
    });
    expect(r.status).toBe(415);
    expect(ran).toBe(0);
  });

  it('README: a mutation over GET is 405 with Allow: POST', async () => {
    const port = await serve(gqlApp());
    const r = await call(port, {
      path: `/graphql?query=${encodeURIComponent('mutation { add(a: 1, b: 1) }')}`,
    });
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBe('POST');
  });

  it('issue #10 item 3: a deeply nested list query is refused (400) before resolvers run; the server answers the next request', async () => {
    const port = await serve(gqlApp());
    let q = 'id';
    for (let i = 0; i < 1000; i++) q = `friends { ${q} }`;
    const r = await postJson(port, '/graphql', { query: `{ me { ${q} } }` });
    expect(r.status).toBe(400);
    expect((r.json() as { errors: unknown[] }).errors.length).toBeGreaterThan(0);
    let d = 'id';
    for (let i = 0; i < 18; i++) d = `friends { ${d} }`;
    const r18 = await postJson(port, '/graphql', { query: `{ me { ${d} } }` });
    expect(r18.status).toBe(400);
    const ok = await postJson(port, '/graphql', { query: '{ me { friends { id } } }' });
    expect(ok.json()).toEqual({ data: { me: { friends: [{ id: '2' }] } } });
  });

  it('issue #10 item 3: depth / alias limits are options (maxDepth)', async () => {
    const port = await serve(gqlApp({ graphql: { maxDepth: 2 } }));
    const r = await postJson(port, '/graphql', { query: '{ me { friends { friends { id } } } }' });
    expect(r.status).toBe(400);
  });

  it('issue #10 item 3: introspection is off in production (development: false) and a switch turns it on', async () => {
    const prod = await serve(gqlApp({ development: false }));
    expect(
      (await postJson(prod, '/graphql', { query: '{ __schema { queryType { name } } }' })).status,
    ).toBe(400);
    const on = await serve(gqlApp({ development: false, graphql: { introspection: true } }));
    const r = await postJson(on, '/graphql', { query: '{ __schema { queryType { name } } }' });
    expect(r.json()).toEqual({ data: { __schema: { queryType: { name: 'Query' } } } });
  });
});
