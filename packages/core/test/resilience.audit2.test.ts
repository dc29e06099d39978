/**
 * Round 2 of the resilience audit: black-box checks through createClient (and, in the
 * core-composed project, createBaseClient + with*()) of the leads round 1 left: a same-key
 * request from a `circuit-half-open` listener, `retry: null`, a throwing `retryOn`, and
 * `prioritize` without lanes.
 */
import { describe, expect, test } from 'vitest';
import { createClient } from '../src/index';
import { makeClient, settle } from './helpers';

describe('retry: null', () => {
  test('is refused alike on the client and on a request: TypeError naming `retry`', async () => {
    const message = /keel: `retry` must be true, false or an object, got null/;
    const make = () => createClient({ fetch: async () => new Response(''), retry: null as never });
    expect(make).toThrow(TypeError);
    expect(make).toThrow(message);
    const t = makeClient();
    const out = await settle(t.client.get('/x', { retry: null as never }));
    expect((out as { reason: unknown }).reason).toBeInstanceOf(TypeError);
    expect((out as { reason: Error }).reason.message).toMatch(message);
    expect(t.fake.calls).toHaveLength(0);
  });
});

describe('scheduler: prioritize without priority lanes', () => {
  test.each([
    ['no scheduler', {}],
    ['a scheduler without lanes', { scheduler: { concurrency: 2 } }],
  ])('%s: a RangeError that says how to enable lanes', (_name, options) => {
    const t = makeClient(options);
    const call = () => t.client.scheduler().prioritize('g', 'high');
    expect(call).toThrow(RangeError);
    expect(call).toThrow(/needs priority lanes.*scheduler: \{ priority: true \}/);
  });
});
