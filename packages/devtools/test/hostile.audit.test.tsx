import { createClient } from '@keel/core';
import { useServerEvents } from '@keel/react';
import { act, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import {
  handWritten,
  live,
  offlineClient,
  renderDevtools,
  selectEntry,
  view,
  watchConsoleErrors,
} from './helpers';

// Data no view can trust: getters that throw, revoked Proxies, symbol keys, megabyte-long
// property names. Each is shown as far as it can be read; the view never fails because of it.

/** A revoked Proxy: every operation on it (even `typeof`-free ones like `in`) throws. */
function revoked(): object {
  const { proxy, revoke } = Proxy.revocable({ a: 1 }, {});
  revoke();
  return proxy;
}

/** An object whose `bad` getter throws, beside readable keys. */
function throwing(): object {
  return Object.defineProperties(
    { before: 'readable' },
    {
      bad: {
        enumerable: true,
        get() {
          throw new Error('getter exploded');
        },
      },
      after: { enumerable: true, value: 'also readable' },
    },
  );
}

describe('Cache view: data that throws when read', () => {
  it('a getter that throws, a revoked Proxy and symbol keys: the rest of the data shows', () => {
    const errors = watchConsoleErrors();
    const client = offlineClient();
    client.setCached(
      'GET /hostile',
      handWritten({
        ok: 'still here',
        getter: throwing(),
        gone: revoked(),
        [Symbol('secret')]: 'a symbol key',
        list: [revoked(), 2],
      }),
    );
    renderDevtools(client);
    const detail = selectEntry('/hostile');
    expect(within(view()).queryByRole('alert')).toBeNull();
    expect(within(detail).getByText('"still here"')).toBeTruthy();
    // The readable keys beside the one that throws, and what threw, in words.
    expect(within(detail).getByText('"readable"')).toBeTruthy();
    expect(within(detail).getByText('"also readable"')).toBeTruthy();
    expect(within(detail).getByText(/unreadable.*getter exploded/)).toBeTruthy();
    // A revoked Proxy, as a value and as an item of a list.
    expect(within(detail).getAllByText(/unreadable.*revoked/)).toHaveLength(2);
    expect(within(detail).getByText('2')).toBeTruthy();
    expect(errors).not.toHaveBeenCalled();
  });

  it('data that is itself a revoked Proxy shows as unreadable', () => {
    const client = offlineClient();
    client.setCached('GET /gone', handWritten(revoked()));
    renderDevtools(client);
    const detail = selectEntry('/gone');
    expect(within(view()).queryByRole('alert')).toBeNull();
    expect(within(detail).getByText(/unreadable.*revoked/)).toBeTruthy();
  });

  it('a megabyte-long property name is cut', () => {
    const client = offlineClient();
    client.setCached('GET /long-key', handWritten({ ['k'.repeat(1_000_000)]: 1, short: 2 }));
    renderDevtools(client);
    const detail = selectEntry('/long-key');
    expect(within(detail).getByText('short')).toBeTruthy();
    expect(detail.textContent!.length).toBeLessThan(10_000);
  });
});

/** Puts what JSON cannot read into the data of each `hostile` event, before the panel sees it. */
function Poisoner({ url }: { url: string }) {
  useServerEvents(url, {
    hostile: (data) => {
      const record = data as Record<string | symbol, unknown>;
      record.gone = revoked();
      record.getter = throwing();
      record[Symbol('s')] = 1;
    },
  });
  return null;
}

describe('Live events view: data that throws when read', () => {
  it('an event whose data holds a revoked Proxy and a throwing getter is listed and opens', async () => {
    const errors = watchConsoleErrors();
    const { hub, base } = await live();
    renderDevtools(
      createClient({ baseURL: base }),
      { initialView: 'events' },
      <Poisoner url="/api/events" />,
    );
    await waitFor(() => expect(hub.size).toBe(1));
    const stream = () =>
      within(view()).getByRole('region', { name: `Event stream ${base}/api/events` });
    await waitFor(() => expect(within(stream()).getByText('open')).toBeTruthy());
    await act(async () => {
      await hub.publish('hostile', { id: 7 });
    });
    await waitFor(() => expect(within(stream()).getByText('1 event')).toBeTruthy());
    expect(within(view()).queryByRole('alert')).toBeNull();
    const item = within(stream()).getAllByRole('listitem')[0]!;
    // The preview starts with what can be read.
    expect(item.querySelector('summary')!.textContent).toContain('{"id":7');
    act(() => (item.querySelector('summary') as HTMLElement).click());
    expect(within(item).getByText('7')).toBeTruthy();
    expect(within(item).getAllByText(/unreadable/).length).toBeGreaterThanOrEqual(2);
    expect(errors).not.toHaveBeenCalled();
  });
});
