// With introspection on (development, or `graphql.introspection: true`), the introspection query
// every tool sends (graphql-js's getIntrospectionQuery(): GraphiQL, Apollo Sandbox, codegen) was
// refused with 400: 15 fields deep (its TypeRef fragment nests `ofType`) and a cost of ~51000
// (types x fields x args, each counted as 10). Introspection is now measured by its own bound,
// as graphql-depth-limit and GraphQL Armor leave it out of depth and cost: at most 3 nested
// lists (the standard query's types > fields > args), which stops the re-entrant amplification
// (`types { fields { type { fields { type { fields ...` ) that the depth limit used to stop.
import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/index';
import { raw, start } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

const schema = /* GraphQL */ `
  type User { id: ID!, name: String!, friends(first: Int): [User!]! }
  input Filter { name: String, ids: [[ID!]!] }
  type Query { me: User!, users(filter: Filter): [User!]! }
`;
const me = { id: '1', name: 'u1', friends: [] };
let app: App;
let port: number;

beforeAll(async () => {
  app = createApp({ development: true });
  app.post('/graphql', (ctx) => ctx.graphql(schema, { me: () => me, users: () => [me] }));
  ({ port } = await start(app));
});

afterAll(() => app.close());

async function post(query: string) {
  const res = await raw(port, {
    method: 'POST',
    path: '/graphql',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  return { status: res.status, body: JSON.parse(res.body) as Record<string, any> };
}

describe('introspection within limits', () => {
  it.each([
    ['default', getIntrospectionQuery()],
    [
      'every option',
      getIntrospectionQuery({
        descriptions: true,
        specifiedByUrl: true,
        directiveIsRepeatable: true,
        schemaDescription: true,
        inputValueDeprecation: true,
        oneOf: true,
      }),
    ],
  ])('the standard introspection query (%s) is answered', async (_, query) => {
    const res = await post(query);
    expect(res.body.errors).toBeUndefined();
    expect(res.status).toBe(200);
    const names = res.body.data.__schema.types.map((t: { name: string }) => t.name);
    expect(names).toContain('User');
    expect(names).toContain('Filter');
  });

  it('re-entering type lists through introspection is still refused', async () => {
    const res = await post(
      '{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }',
    );
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toMatch(/introspection nests 4 lists; the limit is 3/);
  });

  it('the same through __type and a fragment', async () => {
    const res = await post(
      '{ __type(name: "User") { ...T } } fragment T on __Type { fields { type { fields { type { fields { type { fields { name } } } } } } } }',
    );
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toMatch(/introspection nests 4 lists; the limit is 3/);
  });

  it('aliased introspection still counts toward maxAliases', async () => {
    const many = Array.from({ length: 31 }, (_, i) => `a${i}: __schema { queryType { name } }`);
    const res = await post(`{ ${many.join(' ')} }`);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toMatch(/31 aliases; the limit is 30/);
  });

  it('ordinary fields next to introspection are measured as before', async () => {
    const deep = `me { ${'friends { '.repeat(11)}id${' }'.repeat(11)} }`;
    const res = await post(`{ __schema { queryType { name } } ${deep} }`);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toMatch(/13 fields deep; the limit is 12/);
  });
});
