// @vitest-environment node
import { createClient } from '@keel/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { covered, type RunningMutation } from './registry';

const BASE = 'http://127.0.0.1:1/api';

/** A client that never reaches a network: `covered` only resolves and compares URLs. */
function setup(url = '/todos') {
  const client = createClient({ baseURL: BASE, fetch: () => new Promise(() => {}) });
  const mutation: RunningMutation = { method: 'POST', url, options: undefined };
  return { client, mutation };
}

/** The first argument of each `new URL(...)` while `fn` runs (the global URL swapped for a recording subclass). */
function urlsBuilt(fn: () => void): unknown[] {
  const built: unknown[] = [];
  const Original = globalThis.URL;
  vi.stubGlobal(
    'URL',
    class extends Original {
      constructor(...args: ConstructorParameters<typeof URL>) {
        super(...args);
        built.push(args[0]);
      }
    },
  );
  try {
    fn();
  } finally {
    vi.unstubAllGlobals();
  }
  return built;
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('covered: a path target on the mutation own origin', () => {
  it('matches origins as URL.origin does (scheme, host and port; not the user info)', () => {
    const { client, mutation } = setup();
    const cases: [string, boolean][] = [
      ['/todos', true],
      ['/todos/7', true],
      ['http://127.0.0.1:1/api/todos/7', true],
      ['HTTP://127.0.0.1:1/api/todos', true],
      // Other user info, same origin.
      ['http://someone@127.0.0.1:1/api/todos', true],
      ['http://127.0.0.1:2/api/todos', false],
      ['https://127.0.0.1:1/api/todos', false],
      ['http://localhost:1/api/todos', false],
      ['/users', false],
    ];
    for (const [target, expected] of cases) {
      expect([target, covered(client, mutation, target)]).toEqual([target, expected]);
      // The same answer as comparing the parsed origins.
      if (expected) {
        const read = client.resolve('GET', target);
        expect(new URL(read.url).origin).toBe(new URL(`${BASE}/todos`).origin);
      }
    }
  });

  it('a mutation with user info in its URL covers a target of its origin without it', () => {
    const { client, mutation } = setup('http://me@127.0.0.1:1/api/todos');
    expect(covered(client, mutation, '/todos/1')).toBe(true);
    expect(covered(client, mutation, 'http://127.0.0.1:3/api/todos/1')).toBe(false);
  });

  it('compares the resolved URLs without parsing them again when their origins are written alike', () => {
    const { client, mutation } = setup();
    // Resolved once first (the client's own memo): what is parsed below is the comparison's.
    expect(covered(client, mutation, '/todos/7')).toBe(true);
    let answer: boolean | undefined;
    const built = urlsBuilt(() => {
      answer = covered(client, mutation, '/todos/7');
    });
    expect(answer).toBe(true);
    // (The core may parse the target it matches against: its business, not the comparison's.)
    expect(built).not.toContain(`${BASE}/todos`);
    expect(built).not.toContain(`${BASE}/todos/7`);
  });
});
