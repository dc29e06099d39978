// The media type a GraphQL answer is sent as comes from Accept; negotiator parsed it on every
// request whose Accept was not absent, `*/*` or `application/json`, and every GraphQL client
// sends another (`application/graphql-response+json, application/json;q=0.9`). Each Accept is
// negotiated once and remembered, in a memo bounded in entries and in the length of what it
// keeps: a client sending a new Accept on each request evicts, never grows it.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ACCEPT_MEMO_ENTRIES, MAX_MEMO_ACCEPT } from '../src/graphql';
import { type App, createApp } from '../src/index';
import { raw, start } from './helpers';

const negotiated = vi.hoisted(() => ({ accepts: [] as string[] }));

vi.mock('negotiator', async (importOriginal) => {
  const real = (await importOriginal<{ default: new (req: unknown) => object }>()).default;
  // Counts the media-type negotiations, by the Accept they parsed (compression's are encodings).
  class Counting extends (real as new (req: {
    headers: Record<string, string>;
  }) => {
    mediaType(offered: string[]): string | undefined;
  }) {
    readonly #accept: string;
    constructor(req: { headers: Record<string, string> }) {
      super(req);
      this.#accept = req.headers.accept ?? '';
    }
    override mediaType(offered: string[]): string | undefined {
      negotiated.accepts.push(this.#accept);
      return super.mediaType(offered);
    }
  }
  return { default: Counting };
});

const GQL = 'application/graphql-response+json; charset=utf-8';
let app: App;
let port: number;

beforeAll(async () => {
  app = createApp();
  app.all('/graphql', (ctx) => ctx.graphql('type Query { hello: String! }', { hello: () => 'hi' }));
  ({ port } = await start(app));
});

afterAll(() => app.close());

async function typeFor(accept: string): Promise<string | undefined> {
  const res = await raw(port, { path: '/graphql?query=%7Bhello%7D', headers: { accept } });
  return res.headers['content-type'];
}

describe('GraphQL Accept negotiation is remembered', () => {
  it('a repeated Accept is negotiated once, with the same answer each time', async () => {
    const accept = 'application/graphql-response+json, application/json;q=0.9';
    negotiated.accepts.length = 0;
    for (let i = 0; i < 5; i++) expect(await typeFor(accept)).toBe(GQL);
    expect(negotiated.accepts).toEqual([accept]);
    // A refusal (406) is remembered too.
    for (let i = 0; i < 3; i++) {
      const res = await raw(port, {
        path: '/graphql?query=%7Bhello%7D',
        headers: { accept: 'text/html' },
      });
      expect(res.status).toBe(406);
    }
    expect(negotiated.accepts).toEqual([accept, 'text/html']);
  });

  it('is bounded: past ACCEPT_MEMO_ENTRIES new values the oldest is negotiated again', async () => {
    const first = 'application/graphql-response+json;q=0.8, application/json';
    negotiated.accepts.length = 0;
    expect(await typeFor(first)).toBe('application/json');
    for (let i = 0; i < ACCEPT_MEMO_ENTRIES; i++) {
      await typeFor(`application/graphql-response+json, x/y${i};q=0.1`);
    }
    expect(negotiated.accepts).toHaveLength(ACCEPT_MEMO_ENTRIES + 1);
    expect(await typeFor(first)).toBe('application/json');
    expect(negotiated.accepts).toHaveLength(ACCEPT_MEMO_ENTRIES + 2);
  });

  it('an Accept longer than MAX_MEMO_ACCEPT is negotiated every time, never kept', async () => {
    const long = `application/graphql-response+json, ${'x/y;q=0.1, '.repeat(MAX_MEMO_ACCEPT / 10)}*/*;q=0.01`;
    expect(long.length).toBeGreaterThan(MAX_MEMO_ACCEPT);
    negotiated.accepts.length = 0;
    for (let i = 0; i < 3; i++) expect(await typeFor(long)).toBe(GQL);
    expect(negotiated.accepts).toHaveLength(3);
  });
});
