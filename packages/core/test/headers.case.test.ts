import { describe, expect, test } from 'vitest';
import { createClient, createFingerprint } from '../src/index';
import { startServer, type TestServer } from './helpers';

/*
 * Header names reach fetch as the caller spelled them (the spec says only "merged into every
 * request; request-level headers win"): a custom fetch reading `init.headers.Authorization`
 * finds it. Merging and keys stay case-insensitive.
 */

type Init = { headers: Record<string, string>; body?: unknown };

function recorder() {
  const calls: Init[] = [];
  const fetch = async (_url: string | URL | Request, init?: RequestInit) => {
    calls.push(init as Init);
    return Response.json({ ok: true });
  };
  return { calls, fetch };
}

/** The names of `headers` equal to `name` but for case. */
function spellings(headers: Record<string, string>, name: string): string[] {
  return Object.keys(headers).filter((n) => n.toLowerCase() === name.toLowerCase());
}

describe('header names keep their spelling', () => {
  test('a custom fetch reads the client and request headers as written', async () => {
    const { calls, fetch } = recorder();
    const client = createClient({ fetch, headers: { Authorization: 'Bearer t' } });
    await client.get('https://api.test/a', { headers: { 'X-Api-Key': 'k' } });
    const { headers } = calls[0]!;
    expect(headers.Authorization).toBe('Bearer t');
    expect(headers['X-Api-Key']).toBe('k');
    expect(headers).toMatchObject({ Authorization: 'Bearer t', 'X-Api-Key': 'k' });
    expect(headers).toEqual({ Authorization: 'Bearer t', 'X-Api-Key': 'k' });
  });

  test('client headers alone, and request headers alone, as written', async () => {
    const { calls, fetch } = recorder();
    await createClient({ fetch, headers: { 'X-Client': 'c' } }).get('https://api.test/a');
    await createClient({ fetch }).get('https://api.test/b', { headers: { 'X-Req': 'r' } });
    await createClient({ fetch }).get('https://api.test/c', {
      headers: new Headers({ 'X-Req': 'r' }),
    });
    expect(calls[0]!.headers).toEqual({ 'X-Client': 'c' });
    expect(calls[1]!.headers).toEqual({ 'X-Req': 'r' });
    // A Headers instance has lower-cased its names itself.
    expect(calls[2]!.headers).toEqual({ 'x-req': 'r' });
  });

  test('resolve() shows the headers fetch gets', () => {
    const client = createClient({ fetch: recorder().fetch, headers: { Authorization: 'a' } });
    expect(
      client.resolve('GET', 'https://api.test/a', { headers: { 'X-B': 'b' } }).headers,
    ).toEqual({ Authorization: 'a', 'X-B': 'b' });
  });
  test("a request without headers builds none: the client's own object", () => {
    const client = createClient({ fetch: recorder().fetch, headers: { Authorization: 'a' } });
    const a = client.resolve('GET', 'https://api.test/a');
    expect(client.resolve('GET', 'https://api.test/b').headers).toBe(a.headers);
  });
});

describe('merging is case-insensitive: one header, the request one', () => {
  test.each([
    [{ 'X-Api-Key': 'a' }, { 'x-api-key': 'b' }, 'x-api-key'],
    [{ 'x-api-key': 'a' }, { 'X-Api-Key': 'b' }, 'X-Api-Key'],
    [{ 'X-API-KEY': 'a' }, { 'X-Api-Key': 'b' }, 'X-Api-Key'],
  ])('client %o + request %o: sent once as %s', async (clientHeaders, requestHeaders, sent) => {
    const { calls, fetch } = recorder();
    const client = createClient({ fetch, headers: { ...clientHeaders, Accept: 'x/y' } });
    await client.get('https://api.test/a', { headers: requestHeaders });
    const { headers } = calls[0]!;
    expect(spellings(headers, 'x-api-key')).toEqual([sent]);
    expect(headers[sent]).toBe('b');
    expect(headers.Accept).toBe('x/y');
  });

  test('names equal but for case in one object: the last one', async () => {
    const { calls, fetch } = recorder();
    const client = createClient({ fetch, headers: { 'X-A': '1', 'x-a': '2' } });
    await client.get('https://api.test/a', { headers: { 'x-b': '1', 'X-B': '2' } });
    expect(calls[0]!.headers).toEqual({ 'x-a': '2', 'X-B': '2' });
  });

  test('on the wire: exactly one header of the name, the request value', async () => {
    let server: TestServer | undefined;
    try {
      const seen: string[][] = [];
      server = await startServer({
        '/h': (req, res) => {
          seen.push(
            req.rawHeaders.filter(
              (_, i) => i % 2 === 1 && /^x-api-key$/i.test(req.rawHeaders[i - 1]!),
            ),
          );
          res.end('{}');
        },
      });
      const client = createClient({ headers: { 'X-Api-Key': 'a' } });
      await client.get(`${server.url}/h`, { headers: { 'x-api-key': 'b' } });
      expect(seen).toEqual([['b']]);
    } finally {
      await server?.close();
    }
  });
});

describe('headers keel adds never duplicate the caller one', () => {
  test("a JSON body: the caller's Content-Type wins, sent once", async () => {
    const { calls, fetch } = recorder();
    const client = createClient({ fetch });
    await client.post(
      'https://api.test/a',
      { a: 1 },
      {
        headers: { 'Content-Type': 'application/vnd.api+json' },
      },
    );
    expect(calls[0]!.headers).toEqual({ 'Content-Type': 'application/vnd.api+json' });
  });

  test("a JSON body: the client's Content-Type wins, sent once", async () => {
    const { calls, fetch } = recorder();
    const client = createClient({ fetch, headers: { 'Content-Type': 'application/merge+json' } });
    await client.patch('https://api.test/a', { a: 1 });
    expect(calls[0]!.headers).toEqual({ 'Content-Type': 'application/merge+json' });
  });

  test('a JSON body without one: content-type application/json', async () => {
    const { calls, fetch } = recorder();
    await createClient({ fetch }).post('https://api.test/a', { a: 1 });
    expect(spellings(calls[0]!.headers, 'content-type')).toEqual(['content-type']);
    expect(calls[0]!.headers['content-type']).toBe('application/json');
  });

  test('a form body drops a client-wide Content-Type in any case, keeps the request one', async () => {
    const { calls, fetch } = recorder();
    const client = createClient({ fetch, headers: { 'Content-Type': 'application/json', A: '1' } });
    await client.post('https://api.test/a', new URLSearchParams({ a: '1' }));
    await client.post('https://api.test/a', new URLSearchParams({ a: '1' }), {
      headers: { 'CONTENT-TYPE': 'text/x-custom' },
    });
    expect(calls[0]!.headers).toEqual({ A: '1' });
    expect(calls[1]!.headers).toEqual({ A: '1', 'CONTENT-TYPE': 'text/x-custom' });
  });

  test('a string body sent with a JSON Content-Type (any case) must be JSON text', () => {
    const client = createClient({ fetch: recorder().fetch });
    expect(() =>
      client.resolve('POST', 'https://api.test/a', {
        body: '{oops',
        headers: { 'Content-Type': 'application/json' },
      }),
    ).toThrow(RangeError);
  });
});

describe('keys ignore the case of header names', () => {
  test('two requests differing only in name case share a key, and the cache', async () => {
    const { calls, fetch } = recorder();
    const client = createClient({ fetch });
    const a = client.resolve('GET', 'https://api.test/a', { headers: { 'X-Tenant': 't' } });
    const b = client.resolve('GET', 'https://api.test/a', { headers: { 'x-tenant': 't' } });
    expect(a.key).toBe(b.key);
    expect(a.key).toContain('x-tenant:t');
    await client.get('https://api.test/a', { headers: { 'X-Tenant': 't' } });
    await client.get('https://api.test/a', { headers: { 'x-TENANT': 't' } });
    expect(calls).toHaveLength(1);
  });

  test('createFingerprint: names lower-cased in the key, whatever their case', () => {
    const url = 'https://api.test/a';
    const upper = createFingerprint({ method: 'GET', url, headers: { 'X-A': '1', B: '2' } });
    expect(upper).toBe(createFingerprint({ method: 'GET', url, headers: { 'x-a': '1', b: '2' } }));
    expect(upper).toBe('GET https://api.test/a |h b:2\nx-a:1');
  });
});
