import type { RequestError } from '@keel/core';
import { shown } from '@keel/core/internals';
import { useCallback, useEffect, useSyncExternalStore } from 'react';
import { useCommit, useObserver } from './internal/use-observer';
import { definitionInputs, type Inputs, QueryObserver, type QueryResult } from './query/observer';
import type { QueryStore } from './query/store';
import type { QueryDefinition } from './query-options';

/** The results of `useQueries`, one per query, typed from each definition. */
export type QueriesResults<T extends readonly QueryDefinition<any, any>[]> = {
  -readonly [K in keyof T]: T[K] extends QueryDefinition<any, infer TData>
    ? QueryResult<TData, RequestError>
    : never;
};

/**
 * Reads a list of queries whose length can change between renders (one per id of a list, say):
 * each is a `queryOptions(url, options)` (or any `{ url, options }`), and each result is what
 * `useQuery` returns for it, in the same order. The queries share the store with every other
 * hook: identical keys are one entry and one request.
 *
 * @example
 * const users = useQueries(ids.map((id) => queryOptions<User>(`/users/${id}`)));
 * const loaded = users.filter((u) => u.isSuccess).length;
 */
export function useQueries<const T extends readonly QueryDefinition<any, any>[]>(
  queries: T,
): QueriesResults<T> {
  if (!Array.isArray(queries)) {
    throw new TypeError(`keel: useQueries \`queries\` must be an array, got ${shown(queries)}`);
  }
  const list = useObserver(QueriesObserver);
  list.setInputs(queries);
  const id = list.id;
  // biome-ignore lint/correctness/useExhaustiveDependencies: `id` names the keys observed
  const subscribe = useCallback((onChange: () => void) => list.subscribe(onChange), [list, id]);
  useSyncExternalStore(subscribe, list.getSnapshot, list.getSnapshot);
  useCommit(list);
  const environment = list.environment;
  // biome-ignore lint/correctness/useExhaustiveDependencies: new keys or new switches re-arm the listeners
  useEffect(() => list.watchEnvironment(), [list, id, environment]);
  return list.results() as QueriesResults<T>;
}

/**
 * A render's observers and the inputs each had, with what the hook keys its effects on, worked
 * out from those inputs: made when they change, not per render.
 */
interface Rendered {
  readonly observers: QueryObserver[];
  readonly inputs: Inputs[];
  /** The observed keys (and whether each is active): when it changes, React re-subscribes. */
  readonly id: string;
  /**
   * The focus, reconnect and interval switches of each query, defaults applied: when they
   * change the listeners are re-armed (an equal meaning re-arms nothing).
   */
  readonly environment: string;
}

/**
 * One QueryObserver per query of the list, matched by key (see #match); a snapshot that changes
 * when any of them does.
 * A render never drops an observer: one React throws away (a transition to a shorter list, still
 * pending) would leave the positions on screen to new observers that nothing subscribed.
 */
class QueriesObserver {
  readonly store: QueryStore;
  /** Every position's observer: those of this render first, then any the committed list has. */
  readonly #pool: QueryObserver[] = [];
  /** This render's observers. */
  #observers: QueryObserver[] = [];
  /** This render's observers and their inputs, for `commit`; the same object while unchanged. */
  #rendered: Rendered = { observers: [], inputs: [], id: '', environment: '' };
  #tokens: unknown[] = [];
  #results: QueryResult<unknown, unknown>[] = [];
  // Made once: a render with nothing changed allocates neither a callback nor an array.
  readonly #observerAt = (i: number): QueryObserver => {
    const observer = this.#pool[i]!;
    observer.adopt(this.#next[i]!);
    observer.beginRender();
    return observer;
  };
  readonly #inputsAt = (i: number): Inputs => this.#next[i]!;
  readonly #snapshotAt = (i: number): unknown => this.#observers[i]!.getSnapshot();
  readonly #resultAt = (i: number) => this.#observers[i]!.result();

  constructor(store: QueryStore) {
    this.store = store;
  }

  /** The observed keys (and whether each is active): when it changes, React re-subscribes. */
  get id(): string {
    return this.#rendered.id;
  }

  /** The switches of each query: when they change, the listeners are re-armed. */
  get environment(): string {
    return this.#rendered.environment;
  }

  setInputs(queries: readonly QueryDefinition<any, any>[]): void {
    this.#match(queries);
    const rendered = this.#rendered;
    this.#observers = sameItems(rendered.observers, queries.length, this.#observerAt);
    const inputs = sameItems(rendered.inputs, queries.length, this.#inputsAt);
    if (this.#observers !== rendered.observers || inputs !== rendered.inputs) {
      // Both depend on the inputs alone (an observer's key and `active` are read from its own).
      let id = '';
      let environment = '';
      for (const o of this.#observers) {
        const { focus, reconnect, interval } = o.inputs;
        // Every key, disabled ones too: a disabled row follows its key (the cache watcher).
        id += `${o.active}${o.key}\n`;
        environment += `${focus},${reconnect},${interval}\n`;
      }
      this.#rendered = { observers: this.#observers, inputs, id, environment };
    }
  }

  /**
   * Gives each query the pool's observer of its key: the observer keeps what it showed (what
   * `keepPreviousData` hands on), so a list that changes must not hand one row's data to another.
   * Each query's inputs (and key) are worked out first, touching no observer; positions whose key
   * is unchanged keep theirs. A new key takes the observer whose key it had, else one whose key
   * left the list (the previous data of that slot), else a new one. Each observer is then given
   * its inputs once, in `#observerAt`. Nothing derives a view before the observers are chosen
   * (`#shown` would change).
   */
  #match(queries: readonly QueryDefinition<any, any>[]): void {
    const pool = this.#pool;
    const next = this.#next;
    const moving = this.#moving;
    // Emptied first: a render that threw below (an invalid option) may have left some.
    moving.length = 0;
    const n = (next.length = queries.length);
    for (let i = 0; i < n; i++) {
      const observer = pool[i];
      const inputs = (next[i] = definitionInputs(this.store, queries[i]!, observer?.inputs));
      if (observer === undefined || observer.key !== inputs.spec?.key) moving.push(i);
    }
    if (moving.length === 0) return;
    // The observers no position keeps (at a moving position, or past n), in order, and the first
    // of each key. Fields, cleared after use: a render allocates no Map, Set or array for them.
    const free = this.#free;
    const byKey = this.#byKey;
    const claimed = this.#claimed;
    for (const i of moving) if (pool[i] !== undefined) free.push(pool[i]!);
    for (let j = n; j < pool.length; j++) free.push(pool[j]!);
    for (const observer of free) {
      const key = observer.key;
      if (key !== undefined && !byKey.has(key)) byKey.set(key, observer);
    }
    // First each moving row takes the observer of its key, then the others take the rest in order.
    const chosen = this.#chosen;
    for (let m = 0; m < moving.length; m++) {
      const key = next[moving[m]!]!.spec?.key;
      const observer = key === undefined ? undefined : byKey.get(key);
      if (observer !== undefined) {
        byKey.delete(key!);
        claimed.add(observer);
      }
      chosen[m] = observer;
    }
    let f = 0;
    const unclaimed = () => {
      while (f < free.length && claimed.has(free[f]!)) f++;
      return free[f++];
    };
    for (let m = 0; m < moving.length; m++) {
      pool[moving[m]!] = chosen[m] ?? unclaimed() ?? new QueryObserver(this.store);
    }
    // Every observer stays in the pool (see #pool): those no position took, after this render's.
    pool.length = n;
    for (let observer = unclaimed(); observer !== undefined; observer = unclaimed()) {
      pool.push(observer);
    }
    free.length = chosen.length = 0;
    byKey.clear();
    claimed.clear();
  }
  /** This render's inputs, by position (see #match). */
  readonly #next: Inputs[] = [];
  readonly #moving: number[] = [];
  readonly #free: QueryObserver[] = [];
  readonly #chosen: (QueryObserver | undefined)[] = [];
  readonly #byKey = new Map<string, QueryObserver>();
  readonly #claimed = new Set<QueryObserver>();

  /** This render's observers and inputs, for `commit`. */
  get inputs(): object {
    return this.#rendered;
  }

  /** Called after React committed the render that had `rendered`: the pool becomes its list. */
  commit(rendered: object): void {
    const { observers, inputs } = rendered as Rendered;
    const pool = this.#pool;
    for (let i = 0; i < observers.length; i++) {
      pool[i] = observers[i]!;
      observers[i]!.commit(inputs[i]!);
    }
    pool.length = observers.length;
  }

  /**
   * Each observer tells which row changed: a snapshot then looks at those rows only, so a batch of
   * k updates over n rows costs k row checks and one render (n), not a check of every row per
   * update (n * k). All rows are checked once after subscribing (a change between the render
   * and the subscription notified nobody).
   */
  subscribe(onChange: () => void): () => void {
    const observers = (this.#subscribed = this.#observers);
    this.#dirty.clear();
    this.#all = true;
    const releases = observers.map((o, i) =>
      o.subscribe(() => {
        this.#dirty.add(i);
        onChange();
      }),
    );
    return () => {
      for (const release of releases) release();
    };
  }
  /** The observers subscribed (the rows `#dirty` numbers), the rows changed since the last snapshot. */
  #subscribed: QueryObserver[] | undefined;
  readonly #dirty = new Set<number>();
  #all = true;
  /** `#tokens` was rendered (see results): a change makes a new array, not a write into it. */
  #shared = false;

  /** The list of the observers' snapshots: the same array while none of them changed. */
  getSnapshot = (): unknown => {
    const observers = this.#observers;
    if (this.#all || observers !== this.#subscribed) {
      this.#all = false;
      this.#dirty.clear();
      const tokens = sameItems(this.#tokens, observers.length, this.#snapshotAt);
      if (tokens !== this.#tokens) this.#shared = false;
      this.#tokens = tokens;
    }
    for (const i of this.#dirty) {
      const token = observers[i]!.getSnapshot();
      if (token === this.#tokens[i]) continue;
      // Copied once per render at most: later changes before that render write into the copy,
      // which nothing has rendered yet.
      if (this.#shared) this.#tokens = this.#tokens.slice();
      this.#shared = false;
      this.#tokens[i] = token;
    }
    this.#dirty.clear();
    return this.#tokens;
  };

  results(): QueryResult<unknown, unknown>[] {
    this.#shared = true;
    this.#results = sameItems(this.#results, this.#observers.length, this.#resultAt);
    return this.#results;
  }

  watchEnvironment(): () => void {
    const offs = this.#observers.filter((o) => o.active).map((o) => o.watchEnvironment());
    return () => {
      for (const off of offs) off();
    };
  }
}

/**
 * `previous` when `itemAt(0 .. length - 1)` are its items (so identity tells React nothing
 * changed), else a new array of them: none is made when nothing changed. Calls `itemAt` once for
 * each index, in order (setting up each observer is a side effect of `#observerAt`).
 */
function sameItems<T>(previous: T[], length: number, itemAt: (i: number) => T): T[] {
  let next: T[] | undefined;
  for (let i = 0; i < length; i++) {
    const item = itemAt(i);
    if (next === undefined && (i >= previous.length || item !== previous[i])) {
      next = previous.slice(0, i);
    }
    next?.push(item);
  }
  return next ?? (length === previous.length ? previous : previous.slice(0, length));
}
