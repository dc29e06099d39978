import type { ClientConfig } from '../config';
import type { FetchLike } from '../types/options';
import { type Clock, systemClock } from './clock';

/**
 * Where a client keeps its resolved options for `clockOf` and `fetchOf`. A registered symbol
 * rather than module state: the CommonJS build of `@keel/core/internals` carries its own copy of
 * this module.
 */
export const CONFIG: unique symbol = Symbol.for('keel.config');

type Configured = { [CONFIG]?: ClientConfig };

/**
 * The clock `client` was made with (its `clock` option), so sibling packages arm their timers on
 * it too (one clock per client); `systemClock` for a client keel did not make.
 */
export function clockOf(client: object): Clock {
  return (client as Configured)[CONFIG]?.clock ?? systemClock;
}

/**
 * The fetch `client` sends with (its `fetch` option, else the global one looked up per call), so
 * a sibling package's own requests (an event stream) go through it too; undefined for a client
 * keel did not make.
 */
export function fetchOf(client: object): FetchLike | undefined {
  return (client as Configured)[CONFIG]?.fetch;
}
