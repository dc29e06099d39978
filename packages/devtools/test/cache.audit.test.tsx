import { act, fireEvent, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { handWritten, offlineClient, renderDevtools, selectEntry } from './helpers';

// Adversarial data in the Cache view's data tree: cycles, size, depth.

describe('Cache view: hostile bodies', () => {
  it('a body that contains itself shows [circular] instead of walking it forever', () => {
    const client = offlineClient();
    const data: Record<string, unknown> = { name: 'loop', list: [] };
    data.self = data;
    (data.list as unknown[]).push(data);
    client.setCached('GET /loop', handWritten(data));
    renderDevtools(client);
    const detail = selectEntry('/loop');
    expect(within(detail).getByText('"loop"')).toBeTruthy();
    expect(within(detail).getAllByText('[circular]')).toHaveLength(2);
  });

  it('a wide and deep body draws only its open levels; opening a branch draws it', () => {
    const client = offlineClient();
    // 10 keys on 4 levels: 10,000 leaves, 1,111 objects.
    const make = (depth: number): unknown =>
      depth === 0
        ? 'leaf'
        : Object.fromEntries(
            Array.from({ length: 10 }, (_, i) => [`k${depth}${i}`, make(depth - 1)]),
          );
    client.setCached('GET /wide', handWritten(make(4)));
    renderDevtools(client);
    const detail = selectEntry('/wide');
    // The root and its 10 children are open: 100 closed branches below, none of their content.
    expect(detail.querySelectorAll('.kdt-json *').length).toBeLessThan(1_000);
    expect(within(detail).queryByText('k20')).toBeNull();
    const branch = within(detail).getAllByText('k30')[0]!.closest('details')!;
    expect(branch.open).toBe(false);
    act(() => {
      branch.open = true;
      fireEvent(branch, new Event('toggle'));
    });
    expect(within(branch).getAllByText(/^k2\d$/)).toHaveLength(10);
  });

  it('a megabyte string is cut, saying how much is left out', () => {
    const client = offlineClient();
    client.setCached('GET /big', handWritten({ text: 'x'.repeat(1_000_000) }));
    renderDevtools(client);
    const detail = selectEntry('/big');
    expect(detail.textContent!.length).toBeLessThan(5_000);
    expect(within(detail).getByText(/999000 more characters/)).toBeTruthy();
  });
});
