// GraphQL input the body reader never sees. A `variables` value sent as a JSON string (the GET
// form, and a POST that sends it so) was parsed with plain JSON.parse: no `maxJsonDepth`, no
// `__proto__` check, where the same value as an object in the body is refused (400). And
// graphql-js's parser recurses once per bracket, so ~2000 nested `[` (fewer than the 3000
// tokens allowed) overflowed the stack: a 500 and an onError entry per request, at a client's
// will, where every request error is a 400.
import { afterEach, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/index';
import { start } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

const schema = /* GraphQL */ `
  scalar JSON
  type Query { echo(v: JSON): JSON, keys(v: JSON): [String!]! }
`;
const resolvers = {
  Query: {
    echo: (_: unknown, args: { v: unknown }) => args.v,
    keys: (_: unknown, args: { v: object | null }) => Object.keys(args.v ?? {}),
  },
};

let app: App | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

interface Answer {
  status: number;
  errors: string[];
  data: unknown;
  reported: unknown[];
}

async function serve(): Promise<{ port: number; reported: unknown[] }> {
  const reported: unknown[] = [];
  app = createApp({ development: false, bodyLimit: 4 * 1024 * 1024 });
  app.onError((err) => {
    reported.push(err);
  });
  app.all('/graphql', (ctx) => ctx.graphql(schema, resolvers));
  const { port } = await start(app);
  return { port, reported };
}

async function answer(res: Response, reported: unknown[]): Promise<Answer> {
  const body = (await res.json()) as { errors?: { message: string }[]; data?: unknown };
  return {
    status: res.status,
    errors: (body.errors ?? []).map((e) => e.message),
    data: body.data,
    reported,
  };
}

async function post(body: string): Promise<Answer> {
  const { port, reported } = await serve();
  const res = await fetch(`http://127.0.0.1:${port}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  return answer(res, reported);
}

async function get(query: string, variables: string): Promise<Answer> {
  const { port, reported } = await serve();
  const search = new URLSearchParams({ query, variables });
  const res = await fetch(`http://127.0.0.1:${port}/graphql?${search}`);
  return answer(res, reported);
}

const nestedList = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const ECHO = 'query($v: JSON) { echo(v: $v) }';
const KEYS = 'query($v: JSON) { keys(v: $v) }';

describe('GraphQL variables sent as a JSON string are held to the JSON body rules', () => {
  it('a POST: variables nested past maxJsonDepth are a 400, not a stack overflow', async () => {
    const variables = `{"v":${nestedList(100_000)}}`;
    const res = await post(JSON.stringify({ query: ECHO, variables }));
    expect(res.status).toBe(400);
    expect(res.errors).toEqual(['Variables are nested deeper than 1000 levels.']);
    expect(res.reported).toEqual([]);
  });

  it('a POST: a __proto__ key in the variables string is a 400, as in the body', async () => {
    const variables = '{"v":{"__proto__":{"admin":true}}}';
    const res = await post(JSON.stringify({ query: KEYS, variables }));
    expect(res.status).toBe(400);
    expect(res.errors).toEqual([
      'Variables have a forbidden __proto__ or constructor.prototype key.',
    ]);
  });

  it('a GET: constructor.prototype in the variables is a 400', async () => {
    const res = await get(KEYS, '{"v":{"constructor":{"prototype":{"admin":true}}}}');
    expect(res.status).toBe(400);
    expect(res.errors).toEqual([
      'Variables have a forbidden __proto__ or constructor.prototype key.',
    ]);
  });

  it('a GET: variables nested 1500 levels are a 400', async () => {
    // Percent-encoded, 1500 levels fill about 9 KiB of the 16 KiB of headers Node takes.
    const res = await get(ECHO, `{"v":${nestedList(1500)}}`);
    expect(res.status).toBe(400);
    expect(res.errors).toEqual(['Variables are nested deeper than 1000 levels.']);
    expect(res.reported).toEqual([]);
  });

  it("the route's maxJsonDepth applies to them, not the app's", async () => {
    // A route setting a lower maxJsonDepth than the app's: its body is held to it, and its
    // variables string was held to the app's 1000 levels.
    app = createApp({ development: false });
    app.all('/graphql', { maxJsonDepth: 3 }, (ctx) => ctx.graphql(schema, resolvers));
    const { port } = await start(app);
    const deep = `{"v":${nestedList(4)}}`;
    const search = new URLSearchParams({ query: ECHO, variables: deep });
    const viaGet = await answer(await fetch(`http://127.0.0.1:${port}/graphql?${search}`), []);
    expect(viaGet.status).toBe(400);
    expect(viaGet.errors).toEqual(['Variables are nested deeper than 3 levels.']);
    const viaPost = await fetch(`http://127.0.0.1:${port}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: ECHO, variables: deep }),
    });
    expect((await answer(viaPost, [])).errors).toEqual([
      'Variables are nested deeper than 3 levels.',
    ]);
    // Within it, they run.
    const ok = new URLSearchParams({ query: ECHO, variables: `{"v":${nestedList(2)}}` });
    const fine = await answer(await fetch(`http://127.0.0.1:${port}/graphql?${ok}`), []);
    expect([fine.status, fine.data]).toEqual([200, { echo: [[]] }]);
  });

  it('variables within the rules still run (a string, as GET sends them)', async () => {
    const res = await get(ECHO, `{"v":{"a":${nestedList(50)}}}`);
    expect(res.status).toBe(200);
    expect(res.data).toEqual({ echo: { a: JSON.parse(nestedList(50)) } });
  });
});

describe('GraphQL documents nested past what the parser can recurse', () => {
  it('2500 nested list brackets (under maxTokens) are a 400, not a stack overflow', async () => {
    const res = await post(JSON.stringify({ query: `{ echo(v: ${nestedList(2500)}) }` }));
    expect(res.status).toBe(400);
    expect(res.errors).toEqual(['The document nests brackets deeper than 256 levels.']);
    expect(res.reported).toEqual([]);
  });

  it('unclosed brackets count too: the parser recurses before it finds the end', async () => {
    const res = await get(`{ echo(v: ${'['.repeat(2500)}`, '{}');
    expect(res.status).toBe(400);
    expect(res.errors).toEqual(['The document nests brackets deeper than 256 levels.']);
    expect(res.reported).toEqual([]);
  });

  it('brackets inside strings, block strings and comments are not nesting', async () => {
    const text = '['.repeat(300);
    const query = `# ${text}\n{ a: echo(v: "${text}") b: echo(v: """${text}""") }`;
    const res = await post(JSON.stringify({ query }));
    expect(res.status).toBe(200);
    expect(res.data).toEqual({ a: text, b: text });
  });

  it('a long flat document is still refused by maxTokens', async () => {
    const res = await post(JSON.stringify({ query: `{ ${'echo '.repeat(3100)}}` }));
    expect(res.status).toBe(400);
    expect(res.errors[0]).toMatch(/^Syntax Error: Document contains more th[ae][nt] 3000 tokens/);
  });

  it('256 levels still parse and run', async () => {
    const res = await post(JSON.stringify({ query: `{ echo(v: ${nestedList(254)}) }` }));
    expect(res.status).toBe(200);
    expect(res.data).toEqual({ echo: JSON.parse(nestedList(254)) });
  });
});

describe('GraphQL fragment chains nested past what validation and execution can recurse', () => {
  /** `{ ...F0 }` and F0 spreads F1 ... spreads F(n-1), which selects `__typename`. */
  const chain = (n: number, last = '__typename'): string => {
    let query = 'query { ...F0 }';
    for (let i = 0; i < n; i++) {
      query += ` fragment F${i} on Query { ${i + 1 < n ? `...F${i + 1}` : last} }`;
    }
    return query;
  };

  async function serveLarge(): Promise<{ port: number; reported: unknown[] }> {
    const reported: unknown[] = [];
    // Past the default 3000 tokens: a chain of ~6000 fragments fits in 50,000.
    app = createApp({
      development: false,
      bodyLimit: 4 * 1024 * 1024,
      graphql: { maxTokens: 60_000 },
    });
    app.onError((err) => {
      reported.push(err);
    });
    app.all('/graphql', (ctx) => ctx.graphql(schema, resolvers));
    const { port } = await start(app);
    return { port, reported };
  }

  async function postTo(port: number, query: string, reported: unknown[]): Promise<Answer> {
    const res = await fetch(`http://127.0.0.1:${port}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    });
    return answer(res, reported);
  }

  it('a chain of 6000 fragments (under maxTokens) is a 400, not a stack overflow', async () => {
    const { port, reported } = await serveLarge();
    for (const query of [
      chain(6000),
      // A cycle closing the chain: graphql-js's NoFragmentCycles recurses along it too.
      chain(6000, '...F0'),
    ]) {
      const res = await postTo(port, query, reported);
      expect(res.status).toBe(400);
      expect(res.errors).toEqual([
        'The document nests deeper than 256 levels through fragment spreads.',
      ]);
    }
    // An unused chain is validated (and recursed along) too.
    const unused = chain(6000).replace('query { ...F0 }', 'query { __typename }');
    const res = await postTo(port, unused, reported);
    expect(res.status).toBe(400);
    expect(res.errors).toEqual([
      'The document nests deeper than 256 levels through fragment spreads.',
    ]);
    expect(reported).toEqual([]);
  });

  it('fields nested in each fragment of a chain add up', async () => {
    const { port, reported } = await serveLarge();
    // 900 fragments each nesting 10 levels of inline fragments: 9000+ levels in 57,000 tokens,
    // each fragment well within the 256 brackets the parse allows.
    const inner = (spread: string): string =>
      `${'... on Query { '.repeat(10)}${spread}${' }'.repeat(10)}`;
    let query = 'query { ...F0 }';
    for (let i = 0; i < 900; i++) {
      query += ` fragment F${i} on Query { ${inner(i + 1 < 900 ? `...F${i + 1}` : '__typename')} }`;
    }
    const res = await postTo(port, query, reported);
    expect(res.status).toBe(400);
    expect(res.errors).toEqual([
      'The document nests deeper than 256 levels through fragment spreads.',
    ]);
    expect(reported).toEqual([]);
  });

  it('a chain within the bound still runs; a short cycle is graphql-js error', async () => {
    const { port, reported } = await serveLarge();
    const ok = await postTo(port, chain(200), reported);
    expect([ok.status, ok.data]).toEqual([200, { __typename: 'Query' }]);
    const cycle = await postTo(port, chain(3, '...F0'), reported);
    expect(cycle.status).toBe(400);
    expect(cycle.errors[0]).toMatch(/^Cannot spread fragment "F0" within itself via/);
  });
});
