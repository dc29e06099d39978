import { renderHook } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { useClient, useMutation, useQuery, useServerEvents } from '../src/index';

// A new user's first mistake: a hook rendered without a ClientProvider above it. The message
// must name the fix, and not a hook the user never called (useQuery used to say "useClient()").

const MESSAGE = 'keel: the hooks need a <ClientProvider client={...}> above this component';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('a hook outside a ClientProvider', () => {
  it.each<[string, () => unknown]>([
    ['useQuery', () => useQuery('/todos')],
    ['useMutation', () => useMutation('POST', '/todos')],
    ['useServerEvents', () => useServerEvents('/events')],
    ['useClient', () => useClient()],
  ])('%s throws the fix, naming no hook it did not call', (_name, hook) => {
    // React logs the render error; the throw is what is checked.
    vi.spyOn(console, 'error').mockImplementation(() => {});
    expect(() => renderHook(hook)).toThrow(MESSAGE);
  });
});
