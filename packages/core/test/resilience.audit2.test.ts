/**
 * Round 2 of the resilience audit: black-box checks through createClient (and, in the
 * core-composed project, createBaseClient + with*()) of the leads round 1 left: a same-key
 * request from a `circuit-half-open` listener, `retry: null`, a throwing `retryOn`, and
 * `prioritize` without lanes.
 */
import { describe, expect, test } from 'vitest';
import { makeClient } from './helpers';

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
