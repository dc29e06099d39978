import { describe, expect, test } from 'vitest';
import type { RequestOptions } from '../src/index';
import { flush, makeClient, track } from './helpers';

/**
 * An app may reuse one options object and change it while a request made with it is in flight
 * (a shared `headers` object, a `params` object advanced for the next page). A request is what it
 * was when it was made: its key, every attempt it sends and its refetches use the call-time
 * values.
 */
describe('a request is fixed when it is made', () => {
  test('headers, params and a JSON body changed after the call: every attempt sends the call-time values', async () => {
    const headers: Record<string, string> = { 'x-tenant': 'acme' };
    const params: { page: number; tag: string[] } = { page: 1, tag: ['a'] };
    const body = { n: 1, list: [1] };
    const t = makeClient(
      { retry: { attempts: 3, methods: ['PUT'] } },
      {
        handler: (call) =>
          call.index < 2 ? new Response('busy', { status: 503 }) : Response.json({ ok: true }),
      },
    );
    const p = track(t.client.put('/items', body, { headers, params }));
    // Changed right after the call, and again while the retries wait.
    headers['x-tenant'] = 'other';
    headers['x-extra'] = '1';
    params.page = 2;
    params.tag.push('b');
    body.n = 2;
    body.list.push(2);
    await flush();
    delete headers['x-tenant'];
    params.page = 3;
    await t.clock.advance(100 + 200);
    expect(p.current.state).toBe('fulfilled');
    expect(t.fake.calls).toHaveLength(3);
    for (const call of t.fake.calls) {
      expect(call.url).toBe('https://api.test/items?page=1&tag=a');
      expect(call.headers['x-tenant']).toBe('acme');
      expect(call.headers['x-extra']).toBeUndefined();
      expect(call.body).toBe('{"n":1,"list":[1]}');
    }
  });

  test('a Headers instance changed after the call: the dedup key and the attempts keep the call-time value', async () => {
    const headers = new Headers({ 'x-tenant': 'acme' });
    const t = makeClient(
      {},
      {
        handler: (call) =>
          call.index === 0 ? new Response('busy', { status: 503 }) : Response.json({ ok: true }),
      },
    );
    const first = track(t.client.get('/me', { headers }));
    const key = t.client.resolve('GET', '/me', {
      headers: new Headers({ 'x-tenant': 'acme' }),
    }).key;
    headers.set('x-tenant', 'other');
    await flush();
    // The in-flight read is the call-time key's: a read with the call-time headers joins it.
    expect(t.client.isFetching(key)).toBe(true);
    const joiner = track(t.client.get('/me', { headers: { 'x-tenant': 'acme' } }));
    await t.clock.advance(100);
    expect(first.current.state).toBe('fulfilled');
    expect(joiner.current.state).toBe('fulfilled');
    expect(t.fake.calls.map((c) => c.headers['x-tenant'])).toEqual(['acme', 'acme']);
  });

  test('a signal replaced on the options object after the call is not the request’s signal', async () => {
    const first = new AbortController();
    const options: RequestOptions = { signal: first.signal };
    const t = makeClient({}, { handler: () => undefined });
    const p = track(t.client.get('/s', options));
    await flush();
    const second = new AbortController();
    options.signal = second.signal;
    second.abort();
    await flush();
    expect(p.current.state).toBe('pending');
    first.abort();
    await flush();
    expect(p.current.state).toBe('rejected');
  });

  test('a refetch after invalidation sends the call-time request', async () => {
    const headers: Record<string, string> = { 'x-tenant': 'acme' };
    const params: Record<string, number> = { page: 1 };
    const t = makeClient({}, { handler: () => Response.json({ ok: true }) });
    await t.client.get('/list', { headers, params });
    const key = t.client.resolve('GET', '/list', {
      headers: { 'x-tenant': 'acme' },
      params: { page: 1 },
    }).key;
    const off = t.client.subscribe(key, () => {});
    headers['x-tenant'] = 'other';
    params.page = 9;
    t.client.invalidate('/list');
    await flush();
    expect(t.fake.calls).toHaveLength(2);
    expect(t.fake.calls[1]!.url).toBe('https://api.test/list?page=1');
    expect(t.fake.calls[1]!.headers['x-tenant']).toBe('acme');
    off();
  });
});
