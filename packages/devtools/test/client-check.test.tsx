import { createClient, inspect } from '@keel/core';
import { render } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { KeelDevtools } from '../src/index';

// The real `inspect`, counted: the check of the `client` prop calls it.
vi.mock('@keel/core', async (original) => {
  const core = await original<typeof import('@keel/core')>();
  return { ...core, inspect: vi.fn(core.inspect) };
});

describe('the `client` prop check', () => {
  it('runs once per client, not at every render of the closed panel', () => {
    const calls = vi.mocked(inspect);
    const one = createClient({ baseURL: 'http://127.0.0.1:9' });
    const two = createClient({ baseURL: 'http://127.0.0.1:9' });
    const { rerender } = render(<KeelDevtools client={one} />);
    calls.mockClear();
    for (let i = 0; i < 5; i++) rerender(<KeelDevtools client={one} position="top-left" />);
    expect(calls).not.toHaveBeenCalled();
    rerender(<KeelDevtools client={two} />);
    expect(calls).toHaveBeenCalledTimes(1);
    expect(calls).toHaveBeenCalledWith(two);
  });
});
