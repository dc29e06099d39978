// graphql-js's OverlappingFieldsCanBeMerged rule compares every pair of fields that share a
// response path (the same field repeated, or selected again by inline fragments), and each
// pair's selections pair by pair again: quadratic in the repeats. graphql-js 16.15 stops it at
// an internal budget, but only after about a second of event-loop time cold (100+ ms warm) for
// a 5 KiB document within `maxTokens` (`{ me{id} me{id} ... }` 745 times): a few requests a
// second froze the server. Within the budget it ran to the end: 300 repeats compared 45 000
// pairs and answered 200. The pairs are now counted, linearly, before validation runs.
import { afterEach, describe, expect, it } from 'vitest';
import { type App, createApp, type GraphqlOptions } from '../../src/index';
import { start } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

const schema = /* GraphQL */ `
  type User { id: ID!, name: String!, friend: User }
  type Cat { id: ID!, name: String! }
  type Dog { id: ID!, name: String! }
  union Pet = Cat | Dog
  type Query { me: User!, pets: [Pet!]! }
`;

let app: App | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function post(
  query: string,
  graphql?: GraphqlOptions,
): Promise<{ status: number; errors: string[]; ran: number }> {
  let ran = 0;
  app = createApp({ development: false, graphql });
  const me = () => {
    ran++;
    return { id: '1', name: 'n', friend: null };
  };
  app.post('/graphql', (ctx) => ctx.graphql(schema, { Query: { me, pets: () => [] } }));
  const { port } = await start(app);
  const res = await fetch(`http://127.0.0.1:${port}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  const body = (await res.json()) as { errors?: { message: string }[] };
  return { status: res.status, errors: (body.errors ?? []).map((e) => e.message), ran };
}

const repeated = (n: number, field: string): string => `{ ${`${field} `.repeat(n)}}`;

describe('fields repeated at one response path are counted before graphql-js compares them', () => {
  it('745 repeats of me { id } (277 140 pairs of me, as many of me.id) are refused before validation', async () => {
    const res = await post(repeated(745, 'me { id }'));
    expect(res.status).toBe(400);
    expect(res.errors).toEqual([
      'The document repeats fields or fragment spreads at one response path too often: ' +
        'validation would compare more than 20000 pairs of them.',
    ]);
    expect(res.ran).toBe(0);
  });

  it('300 repeats (44 850 pairs of me, as many of me.id), which ran before, are refused', async () => {
    const res = await post(repeated(300, 'me { id }'));
    expect(res.status).toBe(400);
    expect(res.ran).toBe(0);
  });

  it('inline fragments count as repeats: nested ones multiply', async () => {
    const inner = `... on User { id } `.repeat(15);
    const res = await post(`{ ${`... on Query { me { ${inner}} } `.repeat(15)}}`);
    // me: 15 repeats (105 pairs); me.id: 225 repeats (25 200 pairs).
    expect(res.status).toBe(400);
    expect(res.errors[0]).toMatch(
      /^The document repeats fields or fragment spreads at one response path too often/,
    );
  });

  it('an unused fragment is compared too: counted as an operation is', async () => {
    const query = `fragment Heavy on Query ${repeated(300, 'me { id }')} { me { id } }`;
    const res = await post(query);
    expect(res.status).toBe(400);
    expect(res.errors[0]).toMatch(
      /^The document repeats fields or fragment spreads at one response path too often/,
    );
  });

  it('named fragments count too: each spread pairs with the spreads and fields beside it', async () => {
    // 101 me (5050 pairs), me.id 100 (4950); below the first me, 140 spreads: 9730 pairs among
    // them, and each pairs with the 100 ids the other me's bring (14 000).
    const fragments = Array.from({ length: 140 }, (_, i) => `fragment G${i} on User { id }`);
    const spreads = Array.from({ length: 140 }, (_, i) => `...G${i}`).join(' ');
    const query = `${fragments.join(' ')} { me { ${spreads} } ${'me { id } '.repeat(100)}}`;
    const res = await post(query);
    expect(res.status).toBe(400);
    expect(res.errors[0]).toMatch(/^The document repeats fields or fragment spreads at one/);
    expect(res.ran).toBe(0);
  });

  it('ordinary repeats still run: a union with inline fragments per member', async () => {
    const res = await post(`{ pets { ... on Cat { id name } ... on Dog { id name } } me { id } }`);
    expect(res.status).toBe(200);
    expect(res.errors).toEqual([]);
  });

  it('141 repeats (9870 pairs of me, as many of me.id) run; graphql.maxFieldPairs moves the limit', async () => {
    const ok = await post(repeated(141, 'me { id }'));
    expect(ok.status).toBe(200);
    expect(ok.ran).toBe(1);
    const refused = await post(repeated(20, 'me { id }'), { maxFieldPairs: 100 });
    expect(refused.status).toBe(400);
    expect(refused.errors).toEqual([
      'The document repeats fields or fragment spreads at one response path too often: ' +
        'validation would compare more than 100 pairs of them.',
    ]);
  });
});
