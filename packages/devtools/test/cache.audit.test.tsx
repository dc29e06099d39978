import { act, fireEvent, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import {
  handWritten,
  offlineClient,
  panel,
  renderDevtools,
  selectEntry,
  view,
  watchConsoleErrors,
} from './helpers';

// Adversarial data in the Cache view: cycles, size, depth, markup, missing or repeated headers,
// and thousands of entries.

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
    act(() => (branch.querySelector('summary') as HTMLElement).click());
    expect(branch.open).toBe(true);
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

describe('Cache view: hostile entries and many of them', () => {
  it('a megabyte URL is cut in the row and the detail', () => {
    const client = offlineClient();
    client.setCached(`GET /long?q=${'y'.repeat(1_000_000)}`, handWritten(1));
    renderDevtools(client);
    expect(view().textContent!.length).toBeLessThan(10_000);
    act(() =>
      within(view())
        .getByRole('button', { name: /^GET \/long/ })
        .click(),
    );
    expect(view().textContent!.length).toBeLessThan(20_000);
  });

  it('an entry written as { data } alone (no status, no headers) opens', () => {
    const client = offlineClient();
    client.setCached('GET /draft', { data: { title: 'optimistic' } } as never);
    renderDevtools(client);
    const detail = selectEntry('/draft');
    expect(within(detail).getByText('"optimistic"')).toBeTruthy();
    expect(within(detail).getByText('Headers (0)')).toBeTruthy();
  });

  it('a header sent twice (set-cookie) lists both, without React key clashes', () => {
    const errors = watchConsoleErrors();
    const client = offlineClient();
    const headers = new Headers([['x-trace', 't-1']]);
    headers.append('set-cookie', 'a=1');
    headers.append('set-cookie', 'b=2');
    client.setCached('GET /cookies', handWritten(1, headers));
    renderDevtools(client);
    const detail = selectEntry('/cookies');
    expect(within(detail).getAllByText('set-cookie')).toHaveLength(2);
    expect(within(detail).getByText('t-1')).toBeTruthy();
    expect(errors).not.toHaveBeenCalled();
  });

  it('a response with 5,000 headers draws 200 of them and a line counting the rest', () => {
    const client = offlineClient();
    const headers = new Headers();
    for (let i = 0; i < 5_000; i++) headers.append(`x-h-${i}`, `v${i}`);
    client.setCached('GET /many-headers', handWritten(1, headers));
    renderDevtools(client);
    const detail = selectEntry('/many-headers');
    const list = detail.querySelector('details')!;
    expect(within(list).getByText('Headers (5000)')).toBeTruthy();
    expect(list.querySelectorAll('dt')).toHaveLength(200);
    // In the order the response has them (Headers sorts names), then the count of the rest.
    expect(list.querySelector('dt')!.textContent).toBe('x-h-0');
    expect(within(list).getByText('… 4800 more not drawn.')).toBeTruthy();
    expect(detail.textContent!.length).toBeLessThan(10_000);
  });

  it('markup in keys, tags, headers and data is shown as text', () => {
    const client = offlineClient();
    const evil = '<img src=x onerror="window.__pwned=1">';
    client.setCached(
      client.resolve('GET', `/x?q=${encodeURIComponent(evil)}`, { tags: [evil] }),
      handWritten({ [evil]: evil }, new Headers([['x-evil', evil]])),
    );
    renderDevtools(client);
    const detail = selectEntry('x\\?q=.*');
    expect(panel().querySelector('img')).toBeNull();
    expect(within(detail).getAllByText(evil)).toHaveLength(3); // the tag (row and detail), the header
    expect(within(detail).getByText(JSON.stringify(evil))).toBeTruthy(); // the data value
  });

  it('thousands of cache entries: the table draws a bounded number of rows; the filter finds the rest', async () => {
    const client = offlineClient();
    for (let i = 0; i < 3_000; i++) client.setCached(`GET /items/${i}`, handWritten(i));
    renderDevtools(client);
    expect(within(view()).getByText(/3000 of 3000 entries/)).toBeTruthy();
    expect(view().querySelectorAll('tbody tr').length).toBeLessThanOrEqual(200);
    expect(within(view()).getByText(/2800 more not drawn/)).toBeTruthy();
    fireEvent.change(within(view()).getByRole('searchbox'), { target: { value: '/items/2999' } });
    expect(within(view()).getByRole('button', { name: /\/items\/2999$/ })).toBeTruthy();
  }, 30_000);
});

describe('Cache view: cost of a shown entry', () => {
  it("re-renders (a write, the one-second tick) do not walk the selected entry's data again", async () => {
    const client = offlineClient();
    let reads = 0;
    const data = Array.from({ length: 100 }, (_, i) => ({
      id: i,
      get title() {
        reads++;
        return `item ${i}`;
      },
    }));
    client.setCached('GET /items', handWritten(data));
    renderDevtools(client);
    const detail = selectEntry('/items');
    expect(within(detail).getByText('"item 99"')).toBeTruthy();
    const walked = reads;
    expect(walked).toBeGreaterThanOrEqual(100);
    act(() => client.setCached('GET /other', handWritten(1)));
    await act(() => new Promise((resolve) => setTimeout(resolve, 1_100)));
    expect(view().querySelectorAll('tbody tr')).toHaveLength(2);
    expect(reads).toBe(walked);
  });
});
