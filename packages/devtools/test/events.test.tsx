import { createClient } from '@keel/core';
import { useServerEvents } from '@keel/react';
import { act, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { devtoolsTree, live, renderDevtools, view } from './helpers';

function Listener({ url }: { url: string }) {
  useServerEvents(url, { 'todo-added': () => {} });
  return null;
}

/** The section of a connection in the Live events view. */
const connection = (url: string) =>
  within(view()).getByRole('region', { name: `Event stream ${url}` });

describe('Live events view', () => {
  it('shows each connection with its status, last event id and the last events, newest first', async () => {
    const { hub, base } = await live();
    const client = createClient({ baseURL: base });
    const { rerender } = renderDevtools(client, { initialView: 'events' });
    expect(within(view()).getByText('No server-event connection')).toBeTruthy();

    // Two components on one stream: one connection.
    rerender(
      devtoolsTree(client, { initialView: 'events' }, [
        <Listener key="a" url="/api/events" />,
        <Listener key="b" url="/api/events" />,
      ]),
    );
    await waitFor(() => expect(hub.size).toBe(1));
    const stream = () => connection(`${base}/api/events`);
    await waitFor(() => expect(within(stream()).getByText('open')).toBeTruthy());
    expect(within(stream()).getByText('none yet')).toBeTruthy();
    expect(stream().querySelector('dd')!.textContent).toBe('2'); // components
    expect(within(stream()).getByText('No event received yet.')).toBeTruthy();

    await act(async () => {
      await hub.publish('todo-added', { id: 1, title: 'first' });
      await hub.publish('todo-added', { id: 2, title: 'second' });
    });
    await waitFor(() => expect(within(stream()).getByText('2 events')).toBeTruthy());
    const items = within(stream()).getAllByRole('listitem');
    expect(items.map((li) => li.querySelector('summary strong')!.textContent)).toEqual([
      'todo-added',
      'todo-added',
    ]);
    // Newest first, with its id and a preview of its data; expanding shows the data as a tree.
    expect(items[0]!.textContent).toContain('{"id":2,"title":"second"}');
    const lastId = items[0]!.textContent!.match(/#(\S+?)\{/)![1]!;
    expect(within(stream()).getByText(lastId)).toBeTruthy(); // the last event id
    act(() => {
      (items[0]!.querySelector('summary') as HTMLElement).click();
    });
    expect(within(items[0]!).getByText('"second"')).toBeTruthy();
  });

  it('an event longer than the kept bound says it was cut, and by how much', async () => {
    const { hub, base } = await live();
    const client = createClient({ baseURL: base });
    renderDevtools(client, { initialView: 'events' }, <Listener url="/api/events" />);
    const stream = () => connection(`${base}/api/events`);
    await waitFor(() => expect(within(stream()).getByText('open')).toBeTruthy());
    const title = 'x'.repeat(100_000);
    await act(async () => {
      await hub.publish('todo-added', { id: 1, title });
    });
    await waitFor(() => expect(within(stream()).getByText('1 event')).toBeTruthy());
    const [item] = within(stream()).getAllByRole('listitem');
    const length = JSON.stringify({ id: 1, title }).length;
    expect(item!.querySelector('summary')!.textContent).toContain(
      `(cut: 65536 of ${length} characters kept)`,
    );
  });

  it('a connection the server refuses shows closed, with why', async () => {
    const { base } = await live();
    const client = createClient({ baseURL: base });
    renderDevtools(client, { initialView: 'events' }, <Listener url="/api/gone" />);
    const stream = () => connection(`${base}/api/gone`);
    await waitFor(() => expect(within(stream()).getByText('closed')).toBeTruthy());
    expect(within(stream()).getByRole('status').textContent).toMatch(
      /^Stopped: ServerEventsError: Event stream answered HTTP 404 \(GET http:.*\/api\/gone\)$/,
    );
  });
});
