import { createClient } from '@keel/core';
import { useServerEvents } from '@keel/react';
import { act, waitFor, within } from '@testing-library/react';
import type { ReactNode } from 'react';
import { describe, expect, it } from 'vitest';
import { live, renderDevtools, view } from './helpers';

// The Live events view with big and hostile events.

function Listener({ url }: { url: string }) {
  useServerEvents(url, {});
  return null;
}

/** The devtools on the Live events view beside `listener`, once its stream is open. */
async function openStream(listener: ReactNode) {
  const { hub, base } = await live();
  renderDevtools(createClient({ baseURL: base }), { initialView: 'events' }, listener);
  await waitFor(() => expect(hub.size).toBe(1));
  const stream = () =>
    within(view()).getByRole('region', { name: `Event stream ${base}/api/events` });
  await waitFor(() => expect(within(stream()).getByText('open')).toBeTruthy());
  return { hub, stream };
}

describe('Live events view: big and hostile events', () => {
  it('closed events cost their summary only; one opens on a click; markup stays text', async () => {
    const { hub, stream } = await openStream(<Listener url="/api/events" />);

    // 20 events, each a list of 100 objects of 20 keys: 40,000 values in all.
    const big = Array.from({ length: 100 }, (_, i) =>
      Object.fromEntries(Array.from({ length: 20 }, (_, k) => [`k${k}`, `${i}-${k}`])),
    );
    const evil = '<img src=x onerror="window.__pwned=1">';
    await act(async () => {
      for (let i = 0; i < 19; i++) await hub.publish('bulk', big);
      await hub.publish(evil, { [evil]: evil });
    });
    await waitFor(() => expect(within(stream()).getByText('20 events')).toBeTruthy());
    expect(view().querySelectorAll('*').length).toBeLessThan(1_000);
    expect(view().querySelector('img')).toBeNull();

    const items = within(stream()).getAllByRole('listitem');
    expect(items[0]!.querySelector('summary strong')!.textContent).toBe(evil);
    act(() => (items[0]!.querySelector('summary') as HTMLElement).click());
    expect(within(items[0]!).getAllByText(JSON.stringify(evil)).length).toBeGreaterThan(0);
    act(() => (items[1]!.querySelector('summary') as HTMLElement).click());
    expect(within(items[1]!).getByText('Array(100)')).toBeTruthy();
    expect(view().querySelector('img')).toBeNull();
  }, 30_000);
});

/** Reads `big` and adds to the data of every event what JSON cannot carry, counting reads. */
const counted = { reads: 0 };
function Mutator({ url }: { url: string }) {
  useServerEvents(url, {
    big: (data) => {
      const record = data as Record<string, unknown>;
      // 10,000 values whose every read is counted: a preview that walked them all reads 10,000.
      record.items = Array.from({ length: 10_000 }, (_, i) => ({
        get v() {
          counted.reads++;
          return i;
        },
      }));
      record.self = record;
      record.big = 2n ** 70n;
    },
    typed: (data) => {
      const record = data as Record<string, unknown>;
      record.tags = new Map<unknown, unknown>([
        ['a', 1],
        [2, new Set(['x'])],
      ]);
      record.at = new Date(0);
    },
  });
  return null;
}

describe('Live events view: the preview of an event', () => {
  it('is made once per event, reads only what it shows, and shows cycles and BigInts as the tree does', async () => {
    const { hub, stream } = await openStream(<Mutator url="/api/events" />);

    await act(async () => {
      await hub.publish('big', { id: 1 });
    });
    await waitFor(() => expect(within(stream()).getByText('1 event')).toBeTruthy());
    const summary = () => within(stream()).getAllByRole('listitem')[0]!.querySelector('summary')!;
    // Not "[object Object]": the start of the data, cut at 80 characters.
    expect(summary().textContent).toContain('{"id":1,"items":[{"v":0},{"v":1},');
    expect(summary().textContent).toMatch(/…$/);
    const afterFirst = counted.reads;
    expect(afterFirst).toBeGreaterThan(0);
    expect(afterFirst).toBeLessThan(50);

    // More events re-render the list: the first event's preview is not made again.
    await act(async () => {
      for (let i = 2; i <= 5; i++) await hub.publish('other', { id: i });
    });
    await waitFor(() => expect(within(stream()).getByText('5 events')).toBeTruthy());
    expect(counted.reads).toBe(afterFirst);

    // The cycle and the BigInt, shown in full when there is room.
    await act(async () => {
      await hub.publish('small', { id: 6 });
    });
    const { preview } = await import('../src/format');
    const cyclic: Record<string, unknown> = { a: 1, big: 2n ** 70n, list: [1, undefined] };
    cyclic.self = cyclic;
    expect(preview(cyclic, 200)).toBe(
      '{"a":1,"big":1180591620717411303424,"list":[1,undefined],"self":[circular]}',
    );
  });
});

describe('Live events view: the preview of a Map, a Set or a Date', () => {
  it('shows their entries, values and ISO string, as the data tree does when the event opens', async () => {
    const { hub, stream } = await openStream(<Mutator url="/api/events" />);
    await act(async () => {
      await hub.publish('typed', { id: 7 });
    });
    await waitFor(() => expect(within(stream()).getByText('1 event')).toBeTruthy());
    const item = within(stream()).getAllByRole('listitem')[0]!;
    const summary = item.querySelector('summary') as HTMLElement;
    // Not `"tags":{}`: the Map's entries, keyed as the tree keys them.
    expect(summary.textContent).toContain(
      '{"id":7,"tags":Map(2){"a":1,2:Set(1)["x"]},"at":1970-01-01T00:00:00.000Z}',
    );
    act(() => summary.click());
    const rows = [...item.querySelectorAll('.kdt-json .kdt-json-row, .kdt-json summary')].map(
      (row) => row.textContent,
    );
    expect(rows).toEqual(
      expect.arrayContaining([
        'tags: Map(2)',
        '"a": 1',
        '2: Set(1)',
        'at: 1970-01-01T00:00:00.000Z',
      ]),
    );
  });
});

/** Adds to an event's data what a handler may: a toJSON that counts its calls or throws, and values JSON skips. */
const toJSONCalls = { count: 0 };
function Decorator({ url }: { url: string }) {
  useServerEvents(url, {
    decorated: (data) => {
      const record = data as Record<string, unknown>;
      record.list = [undefined, function load() {}, Number.NaN];
      record.counting = {
        id: 1,
        toJSON() {
          toJSONCalls.count++;
          return 'what toJSON says';
        },
      };
      record.throwing = {
        toJSON(): never {
          throw new Error('toJSON trap');
        },
      };
    },
  });
  return null;
}

describe('Live events view: the preview runs no code of the data and reads as the tree does', () => {
  it('a toJSON is not called; undefined, a function and NaN in a list show as the tree shows them', async () => {
    const { hub, stream } = await openStream(<Decorator url="/api/events" />);
    await act(async () => {
      await hub.publish('decorated', { id: 8 });
    });
    await waitFor(() => expect(within(stream()).getByText('1 event')).toBeTruthy());
    const item = within(stream()).getAllByRole('listitem')[0]!;
    const summary = item.querySelector('summary') as HTMLElement;
    expect(summary.textContent).toContain(
      '{"id":8,"list":[undefined,ƒ load(),NaN],"counting":{"id"',
    );
    act(() => summary.click());
    const rows = [...item.querySelectorAll('.kdt-json .kdt-json-row, .kdt-json summary')].map(
      (row) => row.textContent,
    );
    expect(rows).toEqual(
      expect.arrayContaining(['0: undefined', '1: ƒ load()', '2: NaN', 'toJSON: ƒ toJSON()']),
    );
    expect(toJSONCalls.count).toBe(0);
  });
});
