// A GraphQL POST whose JSON body the body reader refuses (malformed, a `__proto__` key, nested
// too deep) is answered before the handler runs, so before the app can know the route is a
// GraphQL one. A client that prefers `application/graphql-response+json` says it is a GraphQL
// client, and a body of that type is a GraphQL response: `{ errors: [{ message }] }`, not the
// body reader's `{ status, error, message }`. Other clients keep the generic 400 (see README).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../src/index';
import { type RawResponse, raw, start } from './helpers';

const GQL = 'application/graphql-response+json; charset=utf-8';
const schema = 'type Query { hello: String! }';

let app: App;
let port: number;
let ran = 0;

beforeAll(async () => {
  app = createApp({ maxJsonDepth: 4 });
  app.post('/graphql', (ctx) => {
    ran++;
    return ctx.graphql(schema, { hello: () => 'hi' });
  });
  app.post('/rest', () => {
    ran++;
    return null;
  });
  ({ port } = await start(app));
});

afterAll(() => app.close());

function post(body: string, accept?: string, path = '/graphql'): Promise<RawResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (accept !== undefined) headers.accept = accept;
  return raw(port, { method: 'POST', path, headers, body });
}

describe('GraphQL body errors', () => {
  it.each([
    ['malformed JSON', '{"query": "{ hello }"', 'Malformed JSON body'],
    [
      'a __proto__ key',
      '{"query":"{ hello }","__proto__":{"x":1}}',
      'JSON body has a forbidden __proto__ or constructor.prototype key',
    ],
    [
      'nesting past maxJsonDepth',
      '{"query":"{ hello }","v":[[[[[1]]]]]}',
      'JSON body is nested deeper than 4 levels',
    ],
  ])('%s: a GraphQL-shaped 400 in application/graphql-response+json', async (_, body, message) => {
    const before = ran;
    for (const accept of [
      'application/graphql-response+json, application/json;q=0.9',
      'application/graphql-response+json',
    ]) {
      const res = await post(body, accept);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toBe(GQL);
      expect(res.headers.vary).toMatch(/\baccept\b/i);
      expect(JSON.parse(res.body)).toEqual({ errors: [{ message }] });
    }
    expect(ran).toBe(before); // the handler never ran
  });

  it('a client that prefers application/json (or sends no Accept) keeps the generic 400', async () => {
    for (const accept of [
      undefined,
      '*/*',
      'application/json',
      'application/json, application/graphql-response+json;q=0.5',
    ]) {
      const res = await post('{"query"', accept);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toBe('application/json');
      expect(JSON.parse(res.body)).toMatchObject({ status: 400, message: 'Malformed JSON body' });
    }
  });

  it('a well-formed request on the same route still runs', async () => {
    const res = await post('{"query":"{ hello }"}', 'application/graphql-response+json');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ data: { hello: 'hi' } });
  });
});
