// @vitest-environment node
import { createClient } from '@keel/core';
import { describe, expect, it, vi } from 'vitest';
import { watchServerEvents } from './inspect';
import { tellWatchers } from './watchers';

/** A client that never reaches a network: only its identity matters here. */
const clientOf = () =>
  createClient({ baseURL: 'http://127.0.0.1:1', fetch: () => new Promise(() => {}) });

describe('telling the watchers of a client', () => {
  it('a watcher stopped by an earlier one during a tell is not called', () => {
    const client = clientOf();
    const second = vi.fn();
    let stopSecond = () => {};
    // The first lets the second go (a devtools view unmounting in the middle of a burst).
    const first = vi.fn(() => stopSecond());
    const stopFirst = watchServerEvents(client, first);
    stopSecond = watchServerEvents(client, second);
    tellWatchers(client);
    expect(first).toHaveBeenCalledTimes(1);
    expect(second).not.toHaveBeenCalled();
    tellWatchers(client);
    expect(first).toHaveBeenCalledTimes(2);
    expect(second).not.toHaveBeenCalled();
    stopFirst();
  });

  it('a watcher added during a tell is told from the next change on', () => {
    const client = clientOf();
    const added = vi.fn();
    const stops: (() => void)[] = [];
    const first = vi.fn(() => {
      if (stops.length === 1) stops.push(watchServerEvents(client, added));
    });
    stops.push(watchServerEvents(client, first));
    tellWatchers(client);
    expect(added).not.toHaveBeenCalled();
    tellWatchers(client);
    expect(added).toHaveBeenCalledTimes(1);
    expect(first).toHaveBeenCalledTimes(2);
    for (const stop of stops) stop();
    tellWatchers(client);
    expect(first).toHaveBeenCalledTimes(2);
  });

  it('a watcher that watches again from its own call is told once per change (no endless tell)', () => {
    const client = clientOf();
    let calls = 0;
    let stop = () => {};
    const again = () => {
      calls++;
      // Bounded, so that a tell that keeps visiting the new entry fails instead of hanging.
      if (calls > 10) return;
      stop();
      stop = watchServerEvents(client, again);
    };
    stop = watchServerEvents(client, again);
    tellWatchers(client);
    expect(calls).toBe(1);
    tellWatchers(client);
    expect(calls).toBe(2);
    stop();
  });
});
