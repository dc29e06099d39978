import { setImmediate as tick } from 'node:timers/promises';
import { describe, expect, test } from 'vitest';
import { decideRetry, dehydrate, type ListenerErrorContext, type RetryOptions } from '../src/index';
import { collectUnhandledRejections, flush, makeClient, track } from './helpers';

/**
 * The predicates an app hands keel are typed `=> boolean` and called synchronously. A plain-JS
 * app may pass an async one: its promise is truthy, so it used to mean "yes" every time (an
 * async `retryOn` retried a 404 three times; an async `subscribe` matcher wanted every key; an
 * async invalidation predicate removed every entry), and its rejection was unhandled. A promise
 * answer is a TypeError naming the option instead, and its rejection is caught.
 */
describe('a predicate that returns a promise', () => {
  const unhandled = collectUnhandledRejections();

  test('retry.retryOn: the request rejects with a TypeError naming it, sent once', async () => {
    const t = makeClient(
      { retry: { attempts: 3, retryOn: (async () => false) as never } },
      { handler: () => new Response('no', { status: 404 }) },
    );
    const p = track(t.client.get('/missing'));
    await t.clock.advance(1000);
    expect(t.fake.calls).toHaveLength(1);
    expect(p.current.state).toBe('rejected');
    const reason = (p.current as { reason: unknown }).reason;
    expect(reason).toBeInstanceOf(TypeError);
    expect((reason as Error).message).toMatch(/`retry\.retryOn` must return a boolean/);
    expect(t.of('retry')).toHaveLength(0);
  });

  test('retry.retryOn whose promise rejects: no unhandled rejection', async () => {
    const t = makeClient(
      {
        retry: {
          retryOn: (() => Promise.reject(new Error('async retryOn failed'))) as never,
        },
      },
      { handler: () => new Response('down', { status: 503 }) },
    );
    const p = track(t.client.get('/down'));
    await t.clock.advance(1000);
    expect((p.current as { reason: Error }).reason.message).toMatch(/`retry\.retryOn`/);
    expect(t.fake.calls).toHaveLength(1);
    await tick();
    await tick();
    expect(unhandled).toEqual([]);
  });

  test('decideRetry refuses a promise answer the same way', () => {
    const options = { retryOn: async () => true } as unknown as RetryOptions;
    expect(() =>
      decideRetry({ error: new Error('x'), options: options as never, attempts: 1 }),
    ).toThrow(TypeError);
  });

  test('a subscribe matcher: no key matches; a TypeError goes to onError, the rejection is caught', async () => {
    const reported: [unknown, ListenerErrorContext][] = [];
    const t = makeClient(
      { onError: (error, context) => reported.push([error, context]) },
      { handler: () => Response.json({ ok: 1 }) },
    );
    const told: string[] = [];
    t.client.subscribe(
      (async (key: string) => {
        throw new Error(`async matcher ${key}`);
      }) as never,
      (u) => told.push(u.key),
    );
    await t.client.get('/a');
    await flush();
    await tick();
    expect(told).toEqual([]);
    const key = t.client.resolve('GET', '/a').key;
    expect(reported.length).toBeGreaterThan(0);
    for (const [error, context] of reported) {
      expect(context).toEqual({ source: 'matcher', key });
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toMatch(/`matcher` must return a boolean/);
    }
    // An async matcher wants no key: invalidation does not refetch for it.
    t.client.invalidate('/a');
    await flush();
    expect(t.fake.calls).toHaveLength(1);
    expect(unhandled).toEqual([]);
  });

  test('an invalidation predicate: a TypeError naming `target`, nothing removed', async () => {
    const t = makeClient(
      {},
      // `/slow` never answers: a read in flight for cancelReads to test.
      { handler: (call) => (call.url.endsWith('/slow') ? undefined : Response.json({ ok: 1 })) },
    );
    await t.client.get('/a');
    const slow = track(t.client.get('/slow'));
    await flush();
    const key = t.client.resolve('GET', '/a').key;
    expect(() =>
      t.client.invalidate((() => Promise.reject(new Error('async predicate'))) as never),
    ).toThrow(/`target` must return a boolean/);
    expect(() => t.client.cancelReads((async () => false) as never)).toThrow(TypeError);
    expect(() => dehydrate(t.client, { include: (async () => true) as never })).toThrow(
      /`include` must return a boolean/,
    );
    expect(t.client.getCached(key)).toBeDefined();
    expect(slow.current.state).toBe('pending');
    t.client.cancelAll();
    await flush();
    expect(slow.current.state).toBe('rejected');
    await tick();
    await tick();
    expect(unhandled).toEqual([]);
  });
});
