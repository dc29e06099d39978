// @vitest-environment node
import { createClient } from '@keel/core';
import { describe, expect, it } from 'vitest';
import { channelCount, channelFor } from './channel';

describe('ServerEventsOptions.reconnect', () => {
  const client = createClient({
    baseURL: 'http://127.0.0.1:1',
    fetch: () => new Promise(() => {}),
  });

  it('a bad value is refused with the option name and the value, and opens no channel', () => {
    const spec = client.resolve('GET', '/events');
    const open = (reconnect: object) => () => channelFor(client, spec, { reconnect } as never);
    expect(open({ initialDelay: -1 })).toThrow(
      new RangeError(
        'keel: `reconnect.initialDelay` must be a non-negative number of ms, at most 2147483647, got -1',
      ),
    );
    expect(open({ initialDelay: '5' })).toThrow(TypeError);
    expect(open({ initialDelay: 500, maxDelay: 100 })).toThrow(
      new RangeError(
        'keel: `reconnect.maxDelay` must be at least reconnect.initialDelay (500), got 100',
      ),
    );
    expect(open({ jitter: 'yes' })).toThrow(TypeError);
    expect(channelCount(client)).toBe(0);
  });
});
