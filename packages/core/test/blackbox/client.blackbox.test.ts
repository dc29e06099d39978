// Black-box acceptance tests of the client spec (seeds/000): "What the service does",
// ClientOptions / RequestOptions, ApiResponse, CancellablePromise and the Client operations.
import { describe, expect, test } from 'vitest';
import { CancelledError, createClient, HttpError, isAbortError } from '../../src/index';
import { json, names, record, settle, setup } from './harness';

describe('Client operations (spec: Endpoints / Client)', () => {
  test('createClient() with no options returns a Client with every operation (spec: 1.)', () => {
    const client = createClient();
    for (const op of [
      'request',
      'get',
      'delete',
      'head',
      'options',
      'post',
      'put',
      'patch',
      'on',
      'subscribe',
      'invalidate',
      'cancelAll',
      'clearCache',
      'cancelGroup',
      'intelligence',
      'circuitBreaker',
      'scheduler',
      'adaptive',
    ]) {
      expect(typeof (client as unknown as Record<string, unknown>)[op], op).toBe('function');
    }
  });

  test('every request method returns a CancellablePromise of ApiResponse {data,status,statusText,headers}', async () => {
    const { client, backend } = setup();
    backend.handler = (req) => json({ m: req.method }, 200, { 'x-a': '1' });
    const calls = [
      client.request('GET', '/r'),
      client.get('/g'),
      client.delete('/d'),
      client.options('/o'),
      client.post('/p', { a: 1 }),
      client.put('/u', { a: 1 }),
      client.patch('/pa', { a: 1 }),
    ];
    for (const p of calls) expect(typeof p.cancel).toBe('function');
    const responses = await Promise.all(calls);
    expect(responses.map((r) => (r.data as { m: string }).m)).toEqual([
      'GET',
      'GET',
      'DELETE',
      'OPTIONS',
      'POST',
      'PUT',
      'PATCH',
    ]);
    const r = responses[0]!;
    expect(r.status).toBe(200);
    expect(typeof r.statusText).toBe('string');
    expect(r.headers).toBeInstanceOf(Headers);
    expect(r.headers.get('x-a')).toBe('1');
    const head = await client.head('/h');
    expect(head.status).toBe(200);
    expect(backend.calls.at(-1)?.method).toBe('HEAD');
  });

  test('post/put/patch take (url, body, options): body and options both reach the request', async () => {
    const { client, backend } = setup();
    await client.post('/p', { a: 1 }, { headers: { 'x-h': 'v' } });
    expect(backend.calls[0]?.body).toBe('{"a":1}');
    expect(backend.calls[0]?.headers['x-h']).toBe('v');
  });

  test('cancel() rejects the promise with CancelledError (spec: CancellablePromise)', async () => {
    const { client, backend } = setup();
    backend.handler = () => new Promise<Response>(() => {});
    const p = client.get('/slow');
    p.cancel();
    const out = await settle(p);
    expect(out.ok).toBe(false);
    if (!out.ok) {
      expect(out.error).toBeInstanceOf(CancelledError);
      expect(isAbortError(out.error)).toBe(true);
    }
  });
});

describe('ClientOptions and RequestOptions (spec: Resources and their fields)', () => {
  test('baseURL is prepended to relative request URLs; a request-level baseURL overrides it', async () => {
    const { client, backend } = setup({ baseURL: 'https://api.test/v1' });
    await client.get('/users');
    await client.get('/users', { baseURL: 'https://other.test' });
    expect(backend.calls[0]?.url).toBe('https://api.test/v1/users');
    expect(backend.calls[1]?.url).toBe('https://other.test/users');
  });

  test('client headers are merged into every request; request-level headers win (spec: ClientOptions.headers, Authentication)', async () => {
    const { client, backend } = setup({ headers: { authorization: 'Bearer a', 'x-common': 'c' } });
    await client.get('/a');
    await client.get('/b', { headers: { authorization: 'Bearer b' } });
    expect(backend.calls[0]?.headers.authorization).toBe('Bearer a');
    expect(backend.calls[0]?.headers['x-common']).toBe('c');
    expect(backend.calls[1]?.headers.authorization).toBe('Bearer b');
    expect(backend.calls[1]?.headers['x-common']).toBe('c');
  });

  test('params are serialized via buildQuery; arrays repeat the key (spec: RequestOptions.params)', async () => {
    const { client, backend } = setup();
    await client.get('/s', {
      params: { q: 'x y', tag: ['a', 'b'], n: 2, t: true, none: null, u: undefined },
    });
    const url = new URL(backend.calls[0]!.url);
    expect(url.searchParams.getAll('tag')).toEqual(['a', 'b']);
    expect(url.searchParams.get('q')).toBe('x y');
    expect(url.searchParams.get('n')).toBe('2');
    expect(url.searchParams.get('t')).toBe('true');
    // README: null/undefined are dropped
    expect(url.searchParams.has('none')).toBe(false);
    expect(url.searchParams.has('u')).toBe(false);
  });

  test('body is JSON-stringified unless a string, URLSearchParams, FormData, Blob, ArrayBuffer or typed array (spec: RequestOptions.body)', async () => {
    const { client, backend } = setup();
    const sp = new URLSearchParams({ a: '1' });
    const fd = new FormData();
    fd.append('f', 'v');
    const blob = new Blob(['b']);
    const ab = new ArrayBuffer(2);
    const ta = new Uint8Array([1, 2]);
    await client.post('/j', { a: [1] });
    await client.post('/s', 'raw text');
    await client.post('/sp', sp);
    await client.post('/fd', fd);
    await client.post('/bl', blob);
    await client.post('/ab', ab);
    await client.post('/ta', ta);
    const bodies = backend.calls.map((c) => c.body);
    expect(bodies[0]).toBe('{"a":[1]}');
    expect(bodies[1]).toBe('raw text');
    expect(bodies[2]).toBe(sp);
    expect(bodies[3]).toBe(fd);
    expect(bodies[4]).toBe(blob);
    expect(bodies[5]).toBe(ab);
    expect(bodies[6]).toBe(ta);
  });

  test('an already-aborted signal rejects immediately with no network call (spec: RequestOptions.signal, Errors 2)', async () => {
    const { client, backend } = setup();
    const ctrl = new AbortController();
    ctrl.abort();
    const out = await settle(client.get('/x', { signal: ctrl.signal }));
    expect(out.ok).toBe(false);
    if (!out.ok) expect(isAbortError(out.error)).toBe(true);
    expect(backend.calls).toHaveLength(0);
  });

  test('an external signal aborted later aborts the current attempt promptly (spec: 6.)', async () => {
    const { client, backend } = setup();
    backend.handler = () => new Promise<Response>(() => {});
    const ctrl = new AbortController();
    const p = settle(client.get('/x', { signal: ctrl.signal }));
    await new Promise((r) => setImmediate(r));
    expect(backend.calls).toHaveLength(1);
    ctrl.abort();
    const out = await p;
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.error).toBeInstanceOf(CancelledError);
    expect(backend.calls[0]?.signal?.aborted).toBe(true);
  });

  test('priority without scheduler.priority is ignored (spec: RequestOptions.priority)', async () => {
    const { client, backend } = setup();
    const r = await client.get('/p', { priority: 'low' });
    expect(r.status).toBe(200);
    expect(backend.calls).toHaveLength(1);
  });

  test('a non-2xx response rejects with HttpError carrying status, statusText, headers', async () => {
    const { client, backend } = setup();
    backend.handler = () =>
      new Response('nope', { status: 404, statusText: 'Not Found', headers: { 'x-e': '1' } });
    const out = await settle(client.get('/missing'));
    expect(out.ok).toBe(false);
    if (!out.ok) {
      expect(out.error).toBeInstanceOf(HttpError);
      const e = out.error as HttpError;
      expect(e.status).toBe(404);
      expect(e.statusText).toBe('Not Found');
      expect(e.headers?.get('x-e')).toBe('1');
    }
  });
});

describe('Events: request / success / error payloads (spec: Events)', () => {
  test('request {key, method, url, tracker} then success {key, tracker, response}', async () => {
    const { client } = setup();
    const log = record(client, ['request', 'success', 'cache-write']);
    const res = await client.get('/e?x=1');
    expect(names(log)).toEqual(['request', 'cache-write', 'success']);
    const req = log[0]!.payload;
    expect(req.key).toEqual(expect.any(String));
    expect(req.method).toBe('GET');
    expect(String(req.url)).toContain('/e?x=1');
    expect(req.tracker).toBeDefined();
    const ok = log[2]!.payload;
    expect(ok.key).toBe(req.key);
    expect(ok.tracker).toBe(req.tracker);
    expect(ok.response).toBe(res);
    expect(log[1]!.payload.key).toBe(req.key);
    expect(log[1]!.payload.response).toBeDefined();
  });

  test('error {key, tracker, error} on failure', async () => {
    const { client, backend } = setup();
    backend.handler = () => json({}, 400);
    const log = record(client, ['request', 'error']);
    await settle(client.get('/bad'));
    expect(names(log)).toEqual(['request', 'error']);
    expect(log[1]!.payload.key).toBe(log[0]!.payload.key);
    expect(log[1]!.payload.tracker).toBe(log[0]!.payload.tracker);
    expect(log[1]!.payload.error).toBeInstanceOf(HttpError);
  });

  test('cancel {key, tracker} when a request is cancelled', async () => {
    const { client, backend } = setup();
    backend.handler = () => new Promise<Response>(() => {});
    const log = record(client, ['cancel']);
    const p = client.get('/c');
    p.cancel();
    await settle(p);
    expect(names(log)).toEqual(['cancel']);
    expect(log[0]!.payload.key).toEqual(expect.any(String));
    expect(log[0]!.payload.tracker).toBeDefined();
  });

  test('on() returns an unsubscribe function', async () => {
    const { client } = setup();
    let n = 0;
    const off = client.on('request', () => {
      n++;
    });
    await client.get('/a');
    off();
    await client.get('/b');
    expect(n).toBe(1);
  });

  test('tracker progresses idle -> pending -> success and is terminal (spec: Request tracker)', async () => {
    const { client } = setup();
    const states: string[] = [];
    client.on('request', (e) => {
      states.push((e.tracker as { state: string }).state);
    });
    client.on('success', (e) => {
      states.push((e.tracker as { state: string }).state);
    });
    await client.get('/t');
    expect(states).toEqual(['pending', 'success']);
  });
});
