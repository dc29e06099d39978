import { renderHook } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import {
  queryOptions,
  useInfiniteQuery,
  useMutation,
  useQueries,
  useQuery,
  useServerEvents,
  useSuspenseQuery,
  watchServerEvents,
} from '../src/index';
import { testClient, wrapperFor } from './helpers';

// Issue #14, item 4: one template for every argument check, as the core's: "keel: ... `name`
// must be <what>, got <the value>", the value shown as the core shows it (5, "x", null, an
// object), not its typeof; TypeError for a value of the wrong type.

/** What a render of `hook` throws. */
function thrownBy(hook: () => unknown): unknown {
  vi.spyOn(console, 'error').mockImplementation(() => {});
  const client = testClient();
  try {
    renderHook(hook, { wrapper: wrapperFor(client) });
  } catch (error) {
    return error;
  } finally {
    vi.restoreAllMocks();
  }
  return undefined;
}

describe('the hooks check their arguments with the core template', () => {
  it.each([
    [
      'queryOptions url',
      () => {
        try {
          queryOptions(5 as never);
        } catch (error) {
          return error;
        }
      },
      'keel: queryOptions `url` must be a string, got 5',
    ],
    [
      'useSuspenseQuery url',
      () => thrownBy(() => useSuspenseQuery(7 as never)),
      'keel: useSuspenseQuery `url` must be a string, got 7',
    ],
    [
      'useQueries queries',
      () => thrownBy(() => useQueries('x' as never)),
      'keel: useQueries `queries` must be an array, got "x"',
    ],
    [
      'useMutation url',
      () => thrownBy(() => useMutation('POST', 3 as never)),
      'keel: useMutation `url` must be a string or a function, got 3',
    ],
    [
      'useServerEvents handlers',
      () => thrownBy(() => useServerEvents('/events', 'h' as never)),
      'keel: useServerEvents `handlers` must be an object, got "h"',
    ],
    [
      'useInfiniteQuery getNextPageParam',
      () =>
        thrownBy(() =>
          useInfiniteQuery('/items', { initialPageParam: 0, getNextPageParam: 1 } as never),
        ),
      'keel: useInfiniteQuery `getNextPageParam` must be a function, got 1',
    ],
    [
      'useInfiniteQuery paramsFor',
      () =>
        thrownBy(() =>
          useInfiniteQuery('/items', {
            initialPageParam: 0,
            getNextPageParam: () => undefined,
            paramsFor: 'page',
          } as never),
        ),
      'keel: useInfiniteQuery `paramsFor` must be a function, got "page"',
    ],
    [
      'watchServerEvents listener',
      () => {
        try {
          watchServerEvents(testClient(), null as never);
        } catch (error) {
          return error;
        }
      },
      'keel: watchServerEvents `listener` must be a function, got null',
    ],
  ])('%s', (_what, attempt, message) => {
    const error = attempt();
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe(message);
  });
});

describe('an object that is not a query definition, given for the URL (a URL object)', () => {
  it('is the query error naming what it got (an object), not "undefined"', () => {
    const client = testClient();
    const url = new URL('http://api.test/todos');
    const { result } = renderHook(
      () => ({ one: useQuery(url as never), list: useQueries([url as never]) }),
      { wrapper: wrapperFor(client) },
    );
    const expected = new TypeError('keel: `url` must be a URL string, got an object');
    expect(result.current.one.error).toEqual(expected);
    expect(result.current.list[0]!.error).toEqual(expected);
  });
});
