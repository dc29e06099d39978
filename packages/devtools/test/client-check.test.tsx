import { createClient, inspect } from '@keel/core';
import { render, screen } from '@testing-library/react';
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
    expect(calls.mock.calls[0]![0]).toBe(two);
  });
});

describe('the open panel', () => {
  it('takes inspect(client) once per client, not at every render', async () => {
    const calls = vi.mocked(inspect);
    const one = createClient({ baseURL: 'http://127.0.0.1:9' });
    const two = createClient({ baseURL: 'http://127.0.0.1:9' });
    const { rerender, unmount } = render(<KeelDevtools client={one} initialIsOpen />);
    expect(await screen.findByRole('region', { name: 'keel devtools' })).toBeTruthy();
    calls.mockClear();
    // The app re-renders: the panel (open, on the same client) with it.
    for (const position of ['top-left', 'top-right', 'bottom-left'] as const) {
      rerender(<KeelDevtools client={one} initialIsOpen position={position} />);
    }
    expect(calls).not.toHaveBeenCalled();
    // Another client is inspected (by the prop check, the panel, the recorder), not the first.
    rerender(<KeelDevtools client={two} initialIsOpen />);
    // By identity (toHaveBeenCalledWith compares two fresh clients as equal).
    const inspected = calls.mock.calls.map(([client]) => client);
    expect(inspected.length).toBeGreaterThan(0);
    expect(inspected.every((client) => client === two)).toBe(true);
    unmount();
  });
});
