import { describe, expect, test, vi } from 'vitest';
import { createClient, type ListenerErrorContext } from '../src/index';
import { collectProcessFailures, createFakeFetch, flush, makeClient } from './helpers';

/**
 * A listener that throws used to be rethrown on a microtask: an uncaught exception, which ends a
 * Node process. It is reported to the client's onError instead, and the request goes on.
 */
describe('listener errors', () => {
  const uncaught = collectProcessFailures('uncaughtException');

  test('a throwing event listener and subscriber reach onError; the caller still gets its data', async () => {
    const reported: [unknown, ListenerErrorContext][] = [];
    const t = makeClient(
      { onError: (error, context) => reported.push([error, context]) },
      { handler: () => Response.json({ ok: 1 }) },
    );
    const key = t.client.resolve('GET', '/a').key;
    const boom = new Error('listener');
    t.client.on('success', () => {
      throw boom;
    });
    t.client.subscribe(key, () => {
      throw new Error('subscriber');
    });
    t.client.subscribe(
      () => {
        throw new Error('matcher');
      },
      () => {},
    );
    await expect(t.client.get('/a')).resolves.toMatchObject({ data: { ok: 1 } });
    await flush();
    expect(reported).toEqual([
      [expect.objectContaining({ message: 'subscriber' }), { source: 'subscriber', key }],
      [expect.objectContaining({ message: 'matcher' }), { source: 'matcher', key }],
      [boom, { source: 'event', event: 'success' }],
    ]);
    expect(uncaught).toEqual([]);
  });

  test('without onError the error is logged, never uncaught', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const fake = createFakeFetch({ handler: () => Response.json(1) });
      const client = createClient({ baseURL: 'https://a.test', fetch: fake.fetch });
      client.on('request', () => {
        throw new Error('boom');
      });
      await client.get('/x');
      await flush();
      expect(log).toHaveBeenCalledWith('keel: a listener of "request" threw', expect.any(Error));
      expect(uncaught).toEqual([]);
    } finally {
      log.mockRestore();
    }
  });

  test('an onError that throws is logged, never uncaught', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const t = makeClient(
        {
          onError: () => {
            throw new Error('handler');
          },
        },
        { handler: () => Response.json(1) },
      );
      t.client.on('success', () => {
        throw new Error('listener');
      });
      await t.client.get('/y');
      await flush();
      expect(log).toHaveBeenCalledWith('keel: the onError handler threw', expect.any(Error));
      expect(uncaught).toEqual([]);
    } finally {
      log.mockRestore();
    }
  });

  test('onError must be a function', () => {
    expect(() =>
      createClient({ onError: 'log' as never, fetch: async () => new Response('') }),
    ).toThrow(/`onError` must be a function/);
  });
});

/**
 * A listener typed `=> void` may be an async function (TypeScript accepts one): its rejection was
 * an unhandled rejection (in Node, with the default `--unhandled-rejections=throw`, the end of the
 * process). It is reported to onError like a throw, with the same context.
 */
describe('an async listener or subscriber that rejects', () => {
  const unhandled = collectProcessFailures('unhandledRejection');

  test('reaches onError, never an unhandled rejection; the caller still gets its data', async () => {
    const reported: [unknown, ListenerErrorContext][] = [];
    const t = makeClient(
      { onError: (error, context) => reported.push([error, context]) },
      { handler: () => Response.json({ ok: 1 }) },
    );
    const key = t.client.resolve('GET', '/a').key;
    const listener = new Error('listener');
    const subscriber = new Error('subscriber');
    t.client.on('success', async () => {
      throw listener;
    });
    t.client.subscribe(key, async () => {
      throw subscriber;
    });
    // A listener whose promise fulfils is no error.
    t.client.on('request', async () => {});
    await expect(t.client.get('/a')).resolves.toMatchObject({ data: { ok: 1 } });
    await new Promise((resolve) => setImmediate(resolve));
    expect(reported).toEqual([
      [subscriber, { source: 'subscriber', key }],
      [listener, { source: 'event', event: 'success' }],
    ]);
    expect(unhandled).toEqual([]);
  });
});

/**
 * `onError` is typed `=> void` too, and an async one is natural (it sends the error to a
 * logging service): its rejection was an unhandled rejection. It is logged, as its throw is.
 */
describe('an async onError that rejects', () => {
  const unhandled = collectProcessFailures('unhandledRejection');

  test('is logged, never an unhandled rejection', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const sent = new Error('log service down');
      const t = makeClient(
        { onError: async () => Promise.reject(sent) },
        { handler: () => Response.json(1) },
      );
      t.client.on('success', () => {
        throw new Error('listener');
      });
      await t.client.get('/z');
      await new Promise((resolve) => setImmediate(resolve));
      expect(log).toHaveBeenCalledWith('keel: the onError handler threw', sent);
      expect(unhandled).toEqual([]);
    } finally {
      log.mockRestore();
    }
  });
});
