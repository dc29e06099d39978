// Item 7: a GraphQL mutation sent as an HTML form POST ran: any page could submit it (CSRF).
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/index';
import { guardProcess } from './harness';

guardProcess();

function make() {
  let count = 0;
  const app = createApp();
  app.post('/graphql', (ctx) =>
    ctx.graphql('type Query { count: Int! } type Mutation { setCount(n: Int!): Int! }', {
      Query: { count: () => count },
      Mutation: { setCount: (_: unknown, args: { n: number }) => (count = args.n) },
    }),
  );
  return { app, count: () => count };
}

describe('item 7: GraphQL POST must be application/json', () => {
  it.each([
    ['application/x-www-form-urlencoded', 'query=mutation%7BsetCount(n%3A5)%7D'],
    ['text/plain', '{"query":"mutation { setCount(n: 5) }"}'],
    [
      'multipart/form-data; boundary=x',
      '--x\r\nContent-Disposition: form-data; name="query"\r\n\r\nmutation { setCount(n: 5) }\r\n--x--',
    ],
  ])('%s: 415 and the mutation does not run', async (type, body) => {
    const { app, count } = make();
    const res = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': type },
      body,
    });
    expect(res.status).toBe(415);
    expect(res.json<{ errors: { message: string }[] }>().errors[0]?.message).toMatch(
      /application\/json/,
    );
    expect(count()).toBe(0);
  });

  it('application/json (with a charset) runs', async () => {
    const { app, count } = make();
    const res = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ query: 'mutation { setCount(n: 5) }' }),
    });
    expect(res.json()).toEqual({ data: { setCount: 5 } });
    expect(count()).toBe(5);
  });
});
