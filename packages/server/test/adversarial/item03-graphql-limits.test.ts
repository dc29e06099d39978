// Item 3: a nested list query of depth 1,000 ran out of memory, depth 18 took 3 s and sent 18 MB,
// and every distinct large document was cached (+17 MB each).
import { describe, expect, it } from 'vitest';
import { type App, createApp, type GraphqlOptions } from '../../src/index';
import { guardProcess, longestStall } from './harness';

guardProcess();

const schema = /* GraphQL */ `
  type User { id: ID!, name: String!, friends: [User!]! }
  type Query { me: User!, hello: String! }
`;
// Every user has two friends: a nested friends query doubles its result at each level.
const user = (id: number): Record<string, unknown> => ({
  id,
  name: `u${id}`,
  friends: () => [user(id * 2), user(id * 2 + 1)],
});
const resolvers = { Query: { me: () => user(1), hello: () => 'hi' } };

function make(options?: GraphqlOptions, development = false): App {
  const app = createApp({ graphql: options, development });
  app.post('/graphql', (ctx) => ctx.graphql(schema, resolvers));
  app.get('/ping', (ctx) => ctx.send('pong'));
  return app;
}

const nested = (depth: number): string =>
  `{ me { ${'friends { '.repeat(depth)}id${' }'.repeat(depth)} } }`;

async function post(app: App, query: string) {
  const res = await app.inject({ method: 'POST', url: '/graphql', body: { query } });
  return {
    status: res.status,
    body: res.body,
    errors: res.json<{ errors?: { message: string }[] }>().errors,
  };
}

describe('item 3: GraphQL documents are bounded before they run', () => {
  it('depth 1,000 is refused before it is parsed, in bounded time and memory', async () => {
    const app = make();
    const heapBefore = process.memoryUsage().heapUsed;
    let res!: Awaited<ReturnType<typeof post>>;
    const stall = await longestStall(async () => {
      res = await post(app, nested(1000));
    });
    expect(res.status).toBe(400);
    // Its brackets nest past what graphql-js's recursive parser is let near (see
    // graphql-nesting.test.ts); the token limit refuses what is long without nesting.
    expect(res.errors?.[0]?.message).toBe('The document nests brackets deeper than 256 levels.');
    expect(res.body.length).toBeLessThan(10_000);
    expect(stall).toBeLessThan(1000);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(200 * 1024 * 1024);
    expect((await app.inject({ url: '/ping' })).body).toBe('pong');
  });

  it('depth 18 is refused by the depth and cost limits before any resolver runs', async () => {
    const app = make();
    let res!: Awaited<ReturnType<typeof post>>;
    const stall = await longestStall(async () => {
      res = await post(app, nested(18));
    });
    expect(res.status).toBe(400);
    const messages = res.errors?.map((e) => e.message).join('\n');
    expect(messages).toMatch(/is 20 fields deep; the limit is 12/);
    expect(messages).toMatch(/costs .*; the limit is 20000/);
    expect(res.body.length).toBeLessThan(10_000);
    expect(stall).toBeLessThan(1000);
  });

  it('aliases and fragments count too', async () => {
    const app = make();
    const aliases = `{ ${Array.from({ length: 31 }, (_, i) => `a${i}: hello`).join(' ')} }`;
    expect((await post(app, aliases)).errors?.[0]?.message).toMatch(/31 aliases; the limit is 30/);
    // Fragments that spread each other: depth and cost are followed through them.
    const fragments = `
      query Deep { me { ...F1 } }
      fragment F1 on User { friends { ...F2 } }
      fragment F2 on User { friends { ...F3 } }
      fragment F3 on User { friends { friends { friends { id } } } }
    `;
    const res = await post(app, fragments);
    expect(res.errors?.map((e) => e.message).join('\n')).toMatch(/Operation "Deep" costs/);
    const cycle = await post(app, '{ me { ...A } } fragment A on User { friends { ...A } }');
    expect(cycle.status).toBe(400);
    expect(cycle.errors?.[0]?.message).toMatch(/Cannot spread fragment "A" within itself/);
  });

  it('a query within the limits runs, and the limits are options', async () => {
    const app = make();
    const ok = await post(app, nested(3));
    expect(ok.status).toBe(200);
    // Each list here holds two users: say so, and the cost of depth 14 is 2^15 - 2.
    const deeper = make({ maxDepth: 30, listFactor: 2, maxCost: 100_000 });
    const deep = await post(deeper, nested(14));
    expect(deep.errors?.map((e) => e.message)).toBeUndefined();
    expect(deep.status).toBe(200);
    expect(() => createApp({ graphql: { maxDepth: 0 } })).toThrow(RangeError);
    expect(() => createApp({ graphql: { introspection: 'yes' as never } })).toThrow(TypeError);
  });

  it('caches documents within a byte budget and never a large one', async () => {
    const app = make({ documentCacheBytes: 4096, maxCachedDocumentBytes: 1024 });
    const runner = (app as unknown as { graphql: { cache: { documents: number; bytes: number } } })
      .graphql;
    // 30 distinct large documents: comments are not tokens, so each one is valid.
    for (let i = 0; i < 30; i++) {
      const res = await post(app, `# ${String(i).padEnd(200_000, 'x')}\n{ hello }`);
      expect(res.status).toBe(200);
    }
    expect(runner.cache.documents).toBe(0);
    for (let i = 0; i < 100; i++) await post(app, `{ hello } # ${i}`.padEnd(200, ' '));
    expect(runner.cache.bytes).toBeLessThanOrEqual(4096);
    expect(runner.cache.documents).toBeGreaterThan(0);
  });

  it('introspection is off by default in production, on in development', async () => {
    const query = '{ __schema { types { name } } }';
    const production = await post(make(), query);
    expect(production.status).toBe(400);
    expect(production.errors?.[0]?.message).toMatch(/introspection/i);
    expect((await post(make({}, true), query)).status).toBe(200);
    expect((await post(make({ introspection: true }), query)).status).toBe(200);
    expect((await post(make(), '{ hello __typename }')).status).toBe(200);
  });
});
