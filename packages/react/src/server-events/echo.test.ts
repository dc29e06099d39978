// @vitest-environment node
import { createClient } from '@keel/core';
import { describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../../core/test/helpers';
import { ECHO_WINDOW_MS, type RunningMutation, startMutation } from '../mutation/registry';
import { storeFor } from '../query/store';
import { echoCovered } from './echo';

/** A client that never reaches a network: echoes are judged from its mutations alone. */
function setup() {
  const clock = new FakeClock();
  const client = createClient({
    baseURL: 'http://127.0.0.1:1/api',
    clock,
    fetch: () => new Promise(() => {}),
  });
  const { mutations } = storeFor(client);
  const start = (url: string) => {
    const mutation: RunningMutation = { method: 'POST', url, options: undefined };
    return { mutation, end: startMutation(mutations, mutation) };
  };
  return { clock, client, start };
}

describe('echoCovered', () => {
  it('judges an echo from the running and lately settled mutations, with no copy of them', async () => {
    const { clock, client, start } = setup();
    const running = start('/todos');
    const settled = start('/users');
    settled.end(true, clock.now());
    const old = start('/tags');
    old.end(true, clock.now() - ECHO_WINDOW_MS);
    start('/other');
    // A copy of the mutations is walked with some() (the count is read before any assertion,
    // which may call it too). push() cannot be spied: the spy records its calls with it.
    const some = vi.spyOn(Array.prototype, 'some');
    const answers = [
      echoCovered(client, '/nowhere'),
      echoCovered(client, '/tags/1'),
      echoCovered(client, '/other/1'),
    ];
    const calls = some.mock.calls.length;
    some.mockRestore();
    expect(calls).toBe(0);
    // `/tags` settled out of the window: its echo is applied.
    expect(answers).toEqual([false, false, true]);
    // Covered by the running mutation: kept on its word, applied if it fails.
    expect(echoCovered(client, '/todos/7')).toBe(true);
    expect(running.mutation.skipped).toEqual(['/todos/7']);
    // Covered by the one that succeeded in the window.
    expect(echoCovered(client, '/users/1')).toBe(true);
    // It succeeded: nothing will apply the target later, so it keeps none.
    expect(settled.mutation.skipped).toBeUndefined();
    await clock.advance(ECHO_WINDOW_MS);
    expect(echoCovered(client, '/users/1')).toBe(false);
  });

  it('covers an echo the server names from its root (hub.invalidate("/api/todos"), baseURL …/api)', () => {
    // The react-live example's case: its mutation is POST /todos on baseURL /api, and the
    // server's hub names the list /api/todos. Judged on the mutation's absolute URL, the target
    // resolved onto the base (/api/api/todos) was never under it, and the tab refetched its
    // own echo (cluster.e2e: three GETs where two are right).
    const { client, start } = setup();
    const running = start('/todos');
    expect(echoCovered(client, '/api/todos')).toBe(true);
    expect(echoCovered(client, '/api/todos/7')).toBe(true);
    expect(running.mutation.skipped).toEqual(['/api/todos', '/api/todos/7']);
    expect(echoCovered(client, '/api/users')).toBe(false);
  });
});
