import { describe, expect, test } from 'vitest';
import { HttpError } from '../errors/http-error';
import { ParseError } from '../errors/parse-error';
import { bodyTypeOf, readResponse } from './read-body';

const url = 'https://a.test/x';
const json = (body: string, status = 200, type = 'application/json') =>
  new Response(body, { status, headers: { 'content-type': type } });

describe('readResponse', () => {
  test('JSON by content type (including +json and charset)', async () => {
    expect((await readResponse(json('{"a":1}'), { method: 'GET', url })).data).toEqual({ a: 1 });
    expect(
      (
        await readResponse(json('[1]', 200, 'application/problem+json; charset=utf-8'), {
          method: 'GET',
          url,
        })
      ).data,
    ).toEqual([1]);
  });

  test('text otherwise, even when the text looks like JSON', async () => {
    const r = await readResponse(new Response('{"a":1}', { status: 200 }), { method: 'GET', url });
    expect(r.data).toBe('{"a":1}');
    const html = await readResponse(json('<p>', 200, 'text/html'), { method: 'GET', url });
    expect(html.data).toBe('<p>');
  });

  test('status, statusText and headers are passed through', async () => {
    const res = new Response('ok', { status: 201, statusText: 'Created', headers: { 'x-a': '1' } });
    const r = await readResponse(res, { method: 'POST', url });
    expect(r.status).toBe(201);
    expect(r.statusText).toBe('Created');
    expect(r.headers.get('x-a')).toBe('1');
  });

  test('204 and HEAD have no data', async () => {
    const noContent = await readResponse(
      new Response(null, { status: 204, headers: { 'content-type': 'application/json' } }),
      { method: 'DELETE', url },
    );
    expect(noContent.data).toBeUndefined();
    expect(noContent.status).toBe(204);
    const head = await readResponse(json('{"ignored":true}'), { method: 'HEAD', url });
    expect(head.data).toBeUndefined();
  });

  // Chaos lead: a body returned where none is read (a custom fetch or proxy answering HEAD, or
  // 204/205/304, with one) was never read nor cancelled, so its stream (and, under undici, its
  // socket) stayed busy. It is cancelled now; a cancel that throws or rejects is ignored.
  describe('a body that is never read is cancelled', () => {
    /** A real stream that never ends on its own; `cancelled` says whether its cancel ran. */
    function endless() {
      const seen = { cancelled: false };
      const body = new ReadableStream<Uint8Array>({
        pull: () => new Promise(() => {}),
        cancel() {
          seen.cancelled = true;
        },
      });
      return { body, seen };
    }
    /** A Response of `status` carrying `body` (the constructor refuses a body for 204/205/304). */
    function withBody(status: number, body: unknown): Response {
      const res = new Response(null, { status, headers: { 'content-type': 'application/json' } });
      Object.defineProperty(res, 'body', { value: body });
      return res;
    }

    test('HEAD', async () => {
      const { body, seen } = endless();
      const res = new Response(body, { headers: { 'content-type': 'application/json' } });
      const r = await readResponse(res, { method: 'HEAD', url });
      expect(r.data).toBeUndefined();
      await Promise.resolve();
      expect(seen.cancelled).toBe(true);
    });

    test.each([204, 205, 304])('%s', async (status) => {
      const { body, seen } = endless();
      const read = readResponse(withBody(status, body), { method: 'GET', url });
      if (status === 304) {
        // Not a 2xx: an HttpError, its body cancelled all the same.
        await expect(read).rejects.toBeInstanceOf(HttpError);
      } else expect((await read).data).toBeUndefined();
      await Promise.resolve();
      expect(seen.cancelled).toBe(true);
    });

    test('a cancel that throws or rejects is ignored', async () => {
      const calls: string[] = [];
      const throwing = {
        cancel() {
          calls.push('sync');
          throw new Error('sync');
        },
      };
      const rejecting = {
        cancel() {
          calls.push('async');
          return Promise.reject(new Error('async'));
        },
      };
      // A body that is no web stream (node-fetch 2 answers with a Node stream): nothing to call.
      for (const body of [throwing, rejecting, {}]) {
        const r = await readResponse(withBody(204, body), { method: 'GET', url });
        expect(r).toMatchObject({ status: 204, data: undefined });
      }
      // A locked stream's cancel rejects: ignored too (no unhandled rejection fails the run).
      const { body } = endless();
      const reader = body.getReader();
      const r = await readResponse(withBody(204, body), { method: 'GET', url });
      expect(r.status).toBe(204);
      await Promise.resolve();
      expect(calls).toEqual(['sync', 'async']);
      reader.releaseLock();
    });
  });

  test('an empty JSON body is undefined, not a parse error', async () => {
    expect((await readResponse(json(''), { method: 'GET', url })).data).toBeUndefined();
  });

  test('malformed JSON on a 2xx is a ParseError with the raw body', async () => {
    const err = await readResponse(json('{"a":'), { method: 'GET', url }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ParseError);
    expect(err).toMatchObject({ name: 'ParseError', status: 200, body: '{"a":' });
  });

  test('non-2xx is an HttpError with status, statusText, headers and the parsed body', async () => {
    const res = new Response('{"message":"nope"}', {
      status: 422,
      statusText: 'Unprocessable',
      headers: { 'content-type': 'application/json', 'x-id': '9' },
    });
    const err = (await readResponse(res, { method: 'POST', url }).catch(
      (e: unknown) => e,
    )) as HttpError;
    expect(err).toBeInstanceOf(HttpError);
    expect(err.status).toBe(422);
    expect(err.statusText).toBe('Unprocessable');
    expect(err.headers?.get('x-id')).toBe('9');
    expect(err.data).toEqual({ message: 'nope' });
    expect(err.message).toContain('422');
  });

  test('non-2xx with a malformed JSON body keeps the raw text as data', async () => {
    const err = (await readResponse(json('oops', 500), { method: 'GET', url }).catch(
      (e: unknown) => e,
    )) as HttpError;
    expect(err).toBeInstanceOf(HttpError);
    expect(err.data).toBe('oops');
  });
});

describe('bodyTypeOf', () => {
  test.each([
    [null, 'text'],
    ['', 'text'],
    ['application/json', 'json'],
    ['application/vnd.api+json; charset=utf-8', 'json'],
    ['text/html; charset=utf-8', 'text'],
    ['text/csv', 'text'],
    ['application/xml', 'text'],
    ['image/svg+xml', 'text'],
    ['application/x-www-form-urlencoded', 'text'],
    ['application/javascript', 'text'],
    ['application/octet-stream', 'arrayBuffer'],
    ['image/png', 'arrayBuffer'],
    ['application/pdf', 'arrayBuffer'],
    ['application/zip', 'arrayBuffer'],
  ] as const)('%s -> %s', (type, expected) => {
    expect(bodyTypeOf(type)).toBe(expected);
  });
});
