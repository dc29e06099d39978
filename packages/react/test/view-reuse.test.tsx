import { act, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { HttpResponse, http } from 'msw';
import { useState } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { type UseQueryOptions, useQuery } from '../src/index';
import { API, deferred, flush, mswServer, testClient, wrapperFor } from './helpers';

const server = mswServer();

/** Called each time the view is derived while the key has no data. */
const placeholderData = vi.fn(() => [0]);
/** One options object: the inputs stay the same across the parent's renders. */
const SLOW_OPTIONS: UseQueryOptions<number[]> = { placeholderData };

function Slow() {
  const { data, isPlaceholderData } = useQuery<number[]>('/slow', SLOW_OPTIONS);
  return (
    <p data-testid="slow">
      {String(data)}:{String(isPlaceholderData)}
    </p>
  );
}

/** Re-renders Slow (not memoized) on each click, with nothing new for its query. */
function Parent() {
  const [n, setN] = useState(0);
  return (
    <>
      <button type="button" onClick={() => setN(n + 1)}>
        {`renders ${n}`}
      </button>
      <Slow />
    </>
  );
}

function Count({ by }: { by: number }) {
  const { data } = useQuery<number[], number>('/n', { select: (list) => list.length * by });
  return <p data-testid="n">{String(data)}</p>;
}

describe('a render with nothing new derives no new view', () => {
  it('re-renders with the same inputs and state do not derive the view again (placeholderData is not called again)', async () => {
    const gate = deferred();
    server.use(
      http.get(`${API}/slow`, async () => {
        await gate.promise;
        return HttpResponse.json([1]);
      }),
    );
    const client = testClient();
    render(<Parent />, { wrapper: wrapperFor(client) });
    await flush();
    expect(screen.getByTestId('slow').textContent).toBe('0:true');
    const derived = placeholderData.mock.calls.length;
    for (let i = 1; i <= 5; i++) {
      act(() => {
        fireEvent.click(screen.getByRole('button'));
      });
      expect(screen.getByRole('button').textContent).toBe(`renders ${i}`);
    }
    expect(screen.getByTestId('slow').textContent).toBe('0:true');
    expect(placeholderData.mock.calls.length).toBe(derived);
    // A new state is derived as before.
    gate.resolve();
    await waitFor(() => expect(screen.getByTestId('slow').textContent).toBe('1:false'));
  });

  it('new options (same URL) still derive the view at that render', async () => {
    server.use(http.get(`${API}/n`, () => HttpResponse.json([1, 2, 3])));
    const client = testClient();
    const { rerender } = render(<Count by={1} />, { wrapper: wrapperFor(client) });
    await waitFor(() => expect(screen.getByTestId('n').textContent).toBe('3'));
    rerender(<Count by={2} />);
    expect(screen.getByTestId('n').textContent).toBe('6');
  });
});
