// Spec 001 ctx.graphql row: "evaluates a GraphQL query or mutation payload of the request against
// the schema and resolvers; the handler returns this call", resolvers optional. What
// test/blackbox/validate-graphql.test.ts and edges.test.ts leave open: no resolvers, variables and
// operationName, async resolvers in both shapes, mutations in both shapes, and the returned call.
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/index';
import { call, postJson, serve } from '../blackbox/helpers';

const schema = `
  type Todo { id: ID!, title: String!, done: Boolean! }
  type Query { hello(name: String): String, todos: [Todo!]!, todo(id: ID!): Todo }
  type Mutation { addTodo(title: String!): Todo! }
`;

function todoResolvers() {
  const todos = [{ id: '1', title: 'write tests', done: false }];
  return {
    byType: {
      Query: {
        hello: (_: unknown, args: { name?: string }) => `Hello, ${args.name ?? 'world'}`,
        todos: async () => todos,
        todo: (_: unknown, args: { id: string }) => todos.find((t) => t.id === args.id) ?? null,
      },
      Mutation: {
        addTodo: async (_: unknown, args: { title: string }) => {
          const todo = { id: String(todos.length + 1), title: args.title, done: false };
          todos.push(todo);
          return todo;
        },
      },
    },
    root: {
      hello: (args: { name?: string }) => `Hello, ${args.name ?? 'world'}`,
      todos: async () => todos,
      todo: (args: { id: string }) => todos.find((t) => t.id === args.id) ?? null,
      addTodo: async (args: { title: string }) => {
        const todo = { id: String(todos.length + 1), title: args.title, done: false };
        todos.push(todo);
        return todo;
      },
    },
    todos,
  };
}

describe('spec 001 ctx.graphql(schema, resolvers?)', () => {
  for (const shape of ['byType', 'root'] as const) {
    it(`query and mutation payloads with variables, resolvers ${shape === 'byType' ? 'by type' : 'as a root value'} (async ones awaited)`, async () => {
      const r = todoResolvers();
      const app = createApp();
      app.post('/graphql', (ctx) => ctx.graphql(schema, r[shape]));
      const port = await serve(app);
      const hello = await postJson(port, '/graphql', {
        query: 'query Greet($name: String) { hello(name: $name) }',
        variables: { name: 'keel' },
      });
      expect(hello.status).toBe(200);
      expect(hello.json()).toEqual({ data: { hello: 'Hello, keel' } });

      const added = await postJson(port, '/graphql', {
        query: 'mutation Add($title: String!) { addTodo(title: $title) { id title done } }',
        variables: { title: 'ship it' },
      });
      expect(added.status).toBe(200);
      expect(added.json()).toEqual({
        data: { addTodo: { id: '2', title: 'ship it', done: false } },
      });
      expect(r.todos).toHaveLength(2);

      const list = await postJson(port, '/graphql', { query: '{ todos { id title } }' });
      expect(list.json()).toEqual({
        data: {
          todos: [
            { id: '1', title: 'write tests' },
            { id: '2', title: 'ship it' },
          ],
        },
      });
    });
  }

  it('without resolvers the schema still evaluates: fields resolve to null', async () => {
    const app = createApp();
    app.post('/graphql', (ctx) => ctx.graphql('type Query { hello: String, n: Int }'));
    const port = await serve(app);
    const r = await postJson(port, '/graphql', { query: '{ hello n __typename }' });
    expect(r.status).toBe(200);
    expect(r.json()).toEqual({ data: { hello: null, n: null, __typename: 'Query' } });
  });

  it('operationName picks one operation of a document with several', async () => {
    const r = todoResolvers();
    const app = createApp();
    app.post('/graphql', (ctx) => ctx.graphql(schema, r.byType));
    const port = await serve(app);
    const query = 'query A { hello } query B { todo(id: "1") { title } }';
    expect((await postJson(port, '/graphql', { query, operationName: 'B' })).json()).toEqual({
      data: { todo: { title: 'write tests' } },
    });
    expect((await postJson(port, '/graphql', { query, operationName: 'A' })).json()).toEqual({
      data: { hello: 'Hello, world' },
    });
    // Several operations and no name: a request error.
    expect((await postJson(port, '/graphql', { query })).status).toBe(400);
  });

  it('a query over GET with variables in the query string', async () => {
    const r = todoResolvers();
    const app = createApp();
    app.get('/graphql', (ctx) => ctx.graphql(schema, r.byType));
    const port = await serve(app);
    const qs = new URLSearchParams({
      query: 'query ($id: ID!) { todo(id: $id) { id title } }',
      variables: JSON.stringify({ id: '1' }),
    });
    const res = await call(port, { path: `/graphql?${qs}` });
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ data: { todo: { id: '1', title: 'write tests' } } });
  });

  it('a document the schema does not validate is a 400 with an errors list and no data', async () => {
    const app = createApp();
    app.post('/graphql', (ctx) => ctx.graphql(schema, todoResolvers().byType));
    const port = await serve(app);
    const r = await postJson(port, '/graphql', { query: '{ nope }' });
    expect(r.status).toBe(400);
    const body = r.json() as { errors: { message: string }[]; data?: unknown };
    expect(body.errors.length).toBeGreaterThan(0);
    expect(body.errors[0]?.message).toMatch(/nope/);
    expect(body.data).toBeUndefined();
  });

  it('the handler returns this call: a promise that settles once the answer is sent', async () => {
    const app = createApp();
    const order: string[] = [];
    app.post('/graphql', async (ctx) => {
      const call = ctx.graphql('type Query { a: Int }', { a: () => 1 });
      expect(call).toBeInstanceOf(Promise);
      await call;
      order.push(`settled, sent=${ctx.res.headersSent}`);
    });
    const port = await serve(app);
    expect((await postJson(port, '/graphql', { query: '{ a }' })).json()).toEqual({
      data: { a: 1 },
    });
    expect(order).toEqual(['settled, sent=true']);
  });
});
