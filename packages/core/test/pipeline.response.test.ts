import { describe, expect, test } from 'vitest';
import { HttpError, KeelError, ParseError } from '../src/index';
import { makeClient } from './helpers';

describe('response handling', () => {
  test('JSON by content type', async () => {
    const t = makeClient({}, { handler: () => Response.json({ a: [1, 2] }) });
    expect((await t.client.get('/j')).data).toEqual({ a: [1, 2] });
  });

  test('vendor +json types are JSON too', async () => {
    const t = makeClient(
      {},
      {
        handler: () =>
          new Response('{"x":1}', { headers: { 'content-type': 'application/hal+json' } }),
      },
    );
    expect((await t.client.get('/hal')).data).toEqual({ x: 1 });
  });

  test('text otherwise', async () => {
    const t = makeClient(
      {},
      { handler: () => new Response('<b>hi</b>', { headers: { 'content-type': 'text/html' } }) },
    );
    expect((await t.client.get('/t')).data).toBe('<b>hi</b>');
  });

  test('204 No Content has no data', async () => {
    const t = makeClient({}, { handler: () => new Response(null, { status: 204 }) });
    const r = await t.client.delete('/x');
    expect(r.status).toBe(204);
    expect(r.data).toBeUndefined();
  });

  test('HEAD has no data but keeps the headers', async () => {
    const t = makeClient(
      {},
      {
        handler: () =>
          new Response(null, {
            headers: { 'content-length': '42', 'content-type': 'application/json' },
          }),
      },
    );
    const r = await t.client.head('/x');
    expect(r.data).toBeUndefined();
    expect(r.headers.get('content-length')).toBe('42');
  });

  test('an empty 200 JSON body is undefined', async () => {
    const t = makeClient(
      {},
      { handler: () => new Response('', { headers: { 'content-type': 'application/json' } }) },
    );
    expect((await t.client.get('/empty')).data).toBeUndefined();
  });

  test('non-2xx is an HttpError with status, statusText, headers and the parsed body', async () => {
    const t = makeClient(
      {},
      {
        handler: () =>
          Response.json(
            { error: 'nope' },
            { status: 403, statusText: 'Forbidden', headers: { 'x-req': 'r1' } },
          ),
      },
    );
    const err = (await t.client.get('/forbidden').catch((e: unknown) => e)) as HttpError;
    expect(err).toBeInstanceOf(HttpError);
    expect(err).toBeInstanceOf(KeelError);
    expect(err.status).toBe(403);
    expect(err.statusText).toBe('Forbidden');
    expect(err.headers?.get('x-req')).toBe('r1');
    expect(err.data).toEqual({ error: 'nope' });
    expect(t.of('error')[0]!.error).toBe(err);
  });

  test('a non-2xx text body is kept as data', async () => {
    const t = makeClient(
      { retry: { attempts: 1 } },
      { handler: () => new Response('down', { status: 500 }) },
    );
    await expect(t.client.get('/down')).rejects.toMatchObject({ status: 500, data: 'down' });
  });

  test('3xx that fetch did not follow is an HttpError', async () => {
    const t = makeClient({}, { handler: () => new Response(null, { status: 304 }) });
    await expect(t.client.get('/nm')).rejects.toMatchObject({ name: 'HttpError', status: 304 });
  });

  test('malformed JSON with a JSON content type is a typed ParseError, not retried', async () => {
    const t = makeClient(
      {},
      { handler: () => new Response('{"a":', { headers: { 'content-type': 'application/json' } }) },
    );
    const err = await t.client.get('/bad-json').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ParseError);
    expect(err).toBeInstanceOf(KeelError);
    expect((err as ParseError).body).toBe('{"a":');
    expect((err as Error).message).toMatch(/JSON/);
    expect(t.fake.calls).toHaveLength(1);
    expect(t.of('cache-write')).toHaveLength(0);
  });
});
