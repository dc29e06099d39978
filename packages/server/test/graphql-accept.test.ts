// GraphQL over HTTP (graphql/graphql-over-http, "Body" and "Status Codes"): a client listing
// `application/graphql-response+json` in Accept gets that media type, with its status rules (no
// `data` entry: 4xx; `data`, even null: 200); `application/json` stays the default (no Accept,
// `*/*`). Accept is negotiated by q-value and order; a request accepting neither type is a 406
// (the spec's RECOMMENDED answer), and every answer says `Vary: Accept`, since it depends on it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../src/index';
import { type RawResponse, raw, start } from './helpers';

const GQL = 'application/graphql-response+json; charset=utf-8';
// keel sends JSON without a charset (RFC 8259 §11: JSON is UTF-8; application/json defines none).
const JSON_TYPE = 'application/json';
const schema =
  'type Query { hello: String!, boom: String!, maybe: String } type Mutation { x: Int }';

let app: App;
let port: number;

beforeAll(async () => {
  app = createApp();
  app.onError(() => {});
  app.all('/graphql', (ctx) =>
    ctx.graphql(schema, {
      hello: () => 'hi',
      boom: () => {
        throw new Error('exploded');
      },
      maybe: () => {
        throw new Error('half');
      },
    }),
  );
  ({ port } = await start(app));
});

afterAll(() => app.close());

function post(body: unknown, accept?: string): Promise<RawResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (accept !== undefined) headers.accept = accept;
  return raw(port, {
    method: 'POST',
    path: '/graphql',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

function get(query: string, accept?: string, method = 'GET'): Promise<RawResponse> {
  return raw(port, {
    method,
    path: `/graphql?query=${encodeURIComponent(query)}`,
    headers: accept === undefined ? {} : { accept },
  });
}

describe('Accept: application/graphql-response+json', () => {
  it.each([
    [undefined, JSON_TYPE],
    ['*/*', JSON_TYPE],
    ['application/*', JSON_TYPE],
    ['application/json', JSON_TYPE],
    ['application/json; charset=utf-8', JSON_TYPE],
    ['text/html,application/xhtml+xml,*/*;q=0.8', JSON_TYPE],
    ['application/graphql-response+json', GQL],
    ['Application/GraphQL-Response+JSON; charset=UTF-8', GQL],
    ['application/graphql-response+json, application/json', GQL],
    ['application/json, application/graphql-response+json', JSON_TYPE],
    ['application/json;q=0.9, application/graphql-response+json', GQL],
    ['application/json;q=0, */*', GQL],
  ])('Accept %s → %s, with Vary: Accept', async (accept, type) => {
    const res = await post({ query: '{ hello }' }, accept);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(type);
    expect(res.headers.vary).toBe('Accept');
    expect(JSON.parse(res.body)).toEqual({ data: { hello: 'hi' } });
    const viaGet = await get('{ hello }', accept);
    expect([viaGet.status, viaGet.headers['content-type'], viaGet.headers.vary]).toEqual([
      200,
      type,
      'Accept',
    ]);
  });

  it('status rules of the media type: no `data` entry is a 4xx, `data` (even null) a 200', async () => {
    const accept = 'application/graphql-response+json';
    const cases: [unknown, number, boolean][] = [
      [{ qeury: '{ hello }' }, 400, false], // invalid parameters
      [{ query: '{ hello }', variables: [7] }, 400, false],
      [{ query: '{' }, 400, false], // document parsing failure
      [{ query: '{ nope }' }, 400, false], // document validation failure
      [{ query: 'query A { hello } query B { hello }' }, 400, false], // no operation determined
      [{ query: 'query ($n: Int!) { hello }', variables: { n: 'x' } }, 400, false], // coercion
      [{ query: '{ boom }' }, 200, true], // a non-null field error: data null, still a response
      [{ query: '{ hello maybe }' }, 200, true], // partial data
    ];
    for (const [body, status, hasData] of cases) {
      const res = await post(body, accept);
      expect([body, res.status, res.headers['content-type'], res.headers.vary]).toEqual([
        body,
        status,
        GQL,
        'Accept',
      ]);
      const parsed = JSON.parse(res.body) as { data?: unknown; errors?: unknown[] };
      expect('data' in parsed).toBe(hasData);
      expect(parsed.errors?.length).toBeGreaterThan(0);
    }
    // JSON parsing failure: the body reader's 400, before the handler (and ctx.graphql) runs.
    expect((await post('NONSENSE', accept)).status).toBe(400);
    const mutation = await get('mutation { x }', accept);
    expect([mutation.status, mutation.headers['content-type'], mutation.headers.allow]).toEqual([
      405,
      GQL,
      'POST',
    ]);
    const form = await raw(port, {
      method: 'POST',
      path: '/graphql',
      headers: { 'content-type': 'text/plain', accept },
      body: '{"query":"{ hello }"}',
    });
    expect([form.status, form.headers['content-type'], form.headers.vary]).toEqual([
      415,
      GQL,
      'Accept',
    ]);
  });

  it('HEAD answers as GET, with the negotiated type and no body', async () => {
    const res = await get('{ hello }', 'application/graphql-response+json', 'HEAD');
    expect([res.status, res.headers['content-type'], res.headers.vary, res.body]).toEqual([
      200,
      GQL,
      'Accept',
      '',
    ]);
  });

  it('accepting neither type: 406 before anything runs, saying what it serves', async () => {
    for (const accept of [
      'text/html',
      'application/xml, text/*',
      'application/json;q=0',
      'application/graphql-response+json;charset=latin1',
    ]) {
      const res = await post({ query: '{ hello }' }, accept);
      expect([accept, res.status, res.headers.vary]).toEqual([accept, 406, 'Accept']);
      expect(res.headers['content-type']).toBe(JSON_TYPE);
      expect(JSON.parse(res.body)).toEqual({
        errors: [
          {
            message:
              'Accept allows neither application/graphql-response+json nor application/json, the types GraphQL responses are sent as.',
          },
        ],
      });
    }
    // An empty Accept lists nothing to choose from: taken as no Accept (RFC 9110 §12.5.1).
    const empty = await post({ query: '{ hello }' }, '');
    expect([empty.status, empty.headers['content-type']]).toEqual([200, JSON_TYPE]);
  });

  it('OPTIONS and other methods answer as before, with Vary: Accept', async () => {
    const options = await raw(port, {
      method: 'OPTIONS',
      path: '/graphql',
      headers: { accept: 'text/html' },
    });
    expect([options.status, options.headers.allow]).toEqual([204, 'GET, POST, HEAD, OPTIONS']);
    const put = await raw(port, {
      method: 'PUT',
      path: '/graphql',
      headers: { accept: 'application/graphql-response+json' },
    });
    expect([put.status, put.headers['content-type'], put.headers.vary]).toEqual([
      405,
      GQL,
      'Accept',
    ]);
  });
});
