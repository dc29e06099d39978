// @vitest-environment node
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { defaultsOf, optionDocProblems, optionTypes } from '../../../scripts/option-docs.mjs';
import { QUERY_DEFAULTS } from '../src/query/hook-options';
import { MAX_EVENT_LENGTH, RECONNECT_DEFAULTS } from '../src/server-events/channel';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

/** The hooks' option types (ConnectionOptions is the resolved, internal form of ServerEventsOptions). */
const types = optionTypes(SRC, (name) => name.endsWith('Options') && name !== 'ConnectionOptions');

const { enabled, refetchOnWindowFocus, refetchOnReconnect } = QUERY_DEFAULTS;
const DEFAULTS = {
  ...defaultsOf('UseQueryOptions', QUERY_DEFAULTS),
  ...defaultsOf('UseInfiniteQueryOptions', { enabled, refetchOnWindowFocus, refetchOnReconnect }),
  ...defaultsOf('ServerEventsOptions', {
    reconnect: RECONNECT_DEFAULTS,
    maxEventLength: MAX_EVENT_LENGTH,
  }),
  ...defaultsOf('ServerEventsOptions.reconnect', RECONNECT_DEFAULTS),
};

describe('option docs: an editor hover is the manual', () => {
  it('finds the hooks option types', () => {
    expect([...types.keys()].sort()).toEqual([
      'ServerEventsOptions',
      'UseInfiniteQueryOptions',
      'UseMutationOptions',
      'UseQueryOptions',
    ]);
  });

  it('every field has a JSDoc sentence, every optional one a @default, and a @default is the resolved default', () => {
    expect(optionDocProblems(types, DEFAULTS)).toEqual([]);
  });
});
