import { describe, expect, it } from 'vitest';
import { createApp } from '../src/index';

const schema = /* GraphQL */ `
  type User { id: ID!, name: String!, shout: String! }
  type Query { hello(name: String): String!, user(id: ID!): User, fail: String, count: Int! }
  type Mutation { setCount(n: Int!): Int! }
`;

function make() {
  let count = 0;
  const app = createApp();
  const onError: unknown[] = [];
  app.onError((e) => {
    onError.push(e);
  });
  const resolvers = {
    Query: {
      hello: (_p: unknown, args: { name?: string }) => `Hello ${args.name ?? 'world'}`,
      user: (_p: unknown, args: { id: string }) => ({ id: args.id, name: `user${args.id}` }),
      fail: () => {
        throw new Error('resolver exploded');
      },
      count: () => count,
    },
    User: { shout: (u: { name: string }) => u.name.toUpperCase() },
    Mutation: { setCount: (_p: unknown, args: { n: number }) => (count = args.n) },
  };
  app.all('/graphql', (ctx) => ctx.graphql(schema, resolvers));
  app.post('/root', (ctx) =>
    ctx.graphql('type Query { greet(who: String!): String! }', {
      greet: (args: { who: string }) => `hi ${args.who}`,
    }),
  );
  return { app, onError };
}

describe('ctx.graphql', () => {
  it('runs POST JSON queries with variables and nested type resolvers', async () => {
    const { app } = make();
    const res = await app.inject({
      method: 'POST',
      url: '/graphql',
      body: {
        query: 'query Q($id: ID!) { user(id: $id) { id name shout } hello }',
        variables: { id: '7' },
      },
    });
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({
      data: { user: { id: '7', name: 'user7', shout: 'USER7' }, hello: 'Hello world' },
    });
    const root = await app.inject({
      method: 'POST',
      url: '/root',
      body: { query: '{ greet(who: "bob") }' },
    });
    expect(root.json()).toEqual({ data: { greet: 'hi bob' } });
  });

  it('runs GET queries from the query string, with operationName', async () => {
    const { app } = make();
    const q = encodeURIComponent('query A { hello(name: "a") } query B { hello(name: "b") }');
    const res = await app.inject({ url: `/graphql?query=${q}&operationName=B` });
    expect(res.json()).toEqual({ data: { hello: 'Hello b' } });
    const vars = encodeURIComponent(JSON.stringify({ n: 'x' }));
    const withVars = await app.inject({
      url: `/graphql?query=${encodeURIComponent('query($n: String) { hello(name: $n) }')}&variables=${vars}`,
    });
    expect(withVars.json()).toEqual({ data: { hello: 'Hello x' } });
  });

  it('accepts mutations only over POST', async () => {
    const { app } = make();
    const q = encodeURIComponent('mutation { setCount(n: 5) }');
    const get = await app.inject({ url: `/graphql?query=${q}` });
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
    expect(get.json<{ errors: unknown[] }>().errors).toHaveLength(1);
    const post = await app.inject({
      method: 'POST',
      url: '/graphql',
      body: { query: 'mutation { setCount(n: 5) }' },
    });
    expect(post.json()).toEqual({ data: { setCount: 5 } });
    expect(
      (await app.inject({ url: `/graphql?query=${encodeURIComponent('{ count }')}` })).json(),
    ).toEqual({
      data: { count: 5 },
    });
  });

  it('answers syntax, validation and request errors with 400 and GraphQL errors', async () => {
    const { app } = make();
    const syntax = await app.inject({
      method: 'POST',
      url: '/graphql',
      body: { query: '{ hello' },
    });
    expect(syntax.status).toBe(400);
    expect(syntax.json<{ errors: { message: string }[] }>().errors[0]?.message).toMatch(
      /Syntax Error/,
    );
    const invalid = await app.inject({
      method: 'POST',
      url: '/graphql',
      body: { query: '{ nope }' },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.json<{ errors: { message: string }[] }>().errors[0]?.message).toMatch(
      /Cannot query field/,
    );
    const missing = await app.inject({ method: 'POST', url: '/graphql', body: {} });
    expect(missing.status).toBe(400);
    const badVars = await app.inject({
      method: 'POST',
      url: '/graphql',
      body: { query: 'query($id: ID!) { user(id: $id) { id } }', variables: {} },
    });
    expect(badVars.status).toBe(400);
    expect(badVars.json()).not.toHaveProperty('data');
  });

  it('puts resolver errors in errors with 200 and no stack trace', async () => {
    const { app, onError } = make();
    const res = await app.inject({
      method: 'POST',
      url: '/graphql',
      body: { query: '{ fail hello }' },
    });
    expect(res.status).toBe(200);
    const body = res.json<{ data: unknown; errors: Record<string, unknown>[] }>();
    expect(body.data).toEqual({ fail: null, hello: 'Hello world' });
    expect(body.errors[0]).toEqual({
      message: 'resolver exploded',
      locations: [{ line: 1, column: 3 }],
      path: ['fail'],
    });
    expect(res.body).not.toMatch(/at .*\.ts/);
    expect(res.body).not.toContain('stack');
    expect(onError).toHaveLength(0);
  });

  it('builds each schema string once', async () => {
    const graphql = await import('graphql');
    const { app } = make();
    const before = graphql.buildSchema;
    await app.inject({ method: 'POST', url: '/graphql', body: { query: '{ hello }' } });
    // A second request reuses the cached schema and parsed document (identity is observable
    // through the type map object passed to resolvers' info).
    const schemas = new Set<unknown>();
    const app2 = createApp();
    app2.post('/g', (ctx) =>
      ctx.graphql('type Query { s: Boolean }', {
        Query: {
          s: (_p: unknown, _a: unknown, _c: unknown, info: { schema: unknown }) =>
            schemas.add(info.schema) && true,
        },
      }),
    );
    for (let i = 0; i < 3; i++)
      await app2.inject({ method: 'POST', url: '/g', body: { query: '{ s }' } });
    expect(schemas.size).toBe(1);
    expect(graphql.buildSchema).toBe(before);
  });
});
