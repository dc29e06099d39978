import type { ApiResponse, RequestError, RequestOptions, RequestSpec } from '@keel/core';
import { checkFunction, checkNumber } from '@keel/core/internals';
import { coreOptions } from '../internal/core-options';
import { isDocumentHidden, onSignal } from '../internal/environment';
import { replaceEqualDeep } from '../internal/equal';
import { type Selection, select } from '../internal/select';
import { isServer } from '../internal/server';
import { checkSwitches } from '../internal/switches';
import { sameFields, TrackedView } from '../internal/tracked-view';
import type { QueryDefinition } from '../query-options';
import { requestOptionsOf } from './hook-options';
import { NoServerDataError } from './no-server-data-error';
import {
  cachedState,
  PENDING,
  type QueryState,
  type QueryStatus,
  syntheticResponse,
} from './state';
import type { QueryEntry, QueryStore } from './store';

/** What `useQuery` returns. Reading a field subscribes the component to changes of that field. */
export interface QueryResult<TData = unknown, TError = RequestError> {
  /** The data (after `select`), placeholder data, or undefined before the first response. */
  data: TData | undefined;
  /** The last error (HttpError, TimeoutError, CircuitOpenError, ...); null when none. */
  error: TError | null;
  status: QueryStatus;
  /** No data yet (`status === 'pending'`). */
  isPending: boolean;
  /** No data yet and a read is in flight: the first load. */
  isLoading: boolean;
  /** A read of this key is in flight (first load, refetch, or invalidation refetch). */
  isFetching: boolean;
  isSuccess: boolean;
  isError: boolean;
  /** `data` is `placeholderData` (or the previous key's data) while this key loads. */
  isPlaceholderData: boolean;
  /** Reads from the network now (even over fresh cached data); resolves with the settled result. */
  refetch: () => Promise<QueryResult<TData, TError>>;
  /** The raw response (status, headers, unselected data); undefined for initial/placeholder data. */
  response: ApiResponse | undefined;
}

/**
 * What `useSuspenseQuery` returns: the component renders only once there is data, so `data` is
 * never undefined. `status` is `'error'` when a refetch failed over data already shown.
 */
export interface SuspenseQueryResult<TData = unknown, TError = RequestError>
  extends Omit<QueryResult<TData, TError>, 'data' | 'status' | 'isPending' | 'isLoading'> {
  data: TData;
  status: 'success' | 'error';
  isPending: false;
  isLoading: false;
}

/** Options of `useQuery`: every core RequestOptions field plus the React ones. */
export interface UseQueryOptions<TQueryData = unknown, TData = TQueryData>
  extends Omit<RequestOptions, 'body' | 'signal' | 'method' | 'url'> {
  /**
   * `false`: no request and no interest in the key.
   * @default true
   */
  enabled?: boolean | undefined;
  /**
   * Derives what `data` holds; the result is structurally shared, so equal selections keep
   * identity and re-render nothing.
   * @default none
   */
  select?: ((data: TQueryData) => TData) | undefined;
  /**
   * Data for a key with nothing cached: written into the cache (as fresh, for the request's cache
   * ttl) when the query mounts, and rendered on the server without a request.
   * @default none
   */
  initialData?: TQueryData | (() => TQueryData | undefined) | undefined;
  /**
   * Shown while a key has no data, without touching the cache. A function receives the data
   * this component showed for its previous key: `keepPreviousData` keeps it while the key changes.
   * @default none
   */
  placeholderData?:
    | TQueryData
    | ((previousData: TQueryData | undefined) => TQueryData | undefined)
    | undefined;
  /**
   * Refetch every `n` ms (at most 2147483647) while mounted (paused in a background tab).
   * @default false
   */
  refetchInterval?: number | false | undefined;
  /**
   * Revalidate when the window regains focus: a cache-first read (stale data only).
   * @default true
   */
  refetchOnWindowFocus?: boolean | undefined;
  /**
   * Revalidate when the browser goes back online (cache-first).
   * @default true
   */
  refetchOnReconnect?: boolean | undefined;
  /**
   * Suspend (throw a promise) while there is no data and throw the error to a boundary, as
   * `useSuspenseQuery` does (which also types `data` as never undefined).
   * @default false
   */
  suspense?: boolean | undefined;
}

/** Options of `useSuspenseQuery`: those of useQuery without the ones that cannot apply. */
export type UseSuspenseQueryOptions<TQueryData = unknown, TData = TQueryData> = Omit<
  UseQueryOptions<TQueryData, TData>,
  'enabled' | 'placeholderData' | 'suspense'
>;

type View = QueryResult<unknown, unknown>;

/** What `refetchInterval` must be (a wrong type is a TypeError, a wrong number a RangeError). */
const INTERVAL = 'a positive number of ms, at most 2147483647, or false';

/** The inputs of one render, resolved; replaced as a whole when the URL or options change. */
export interface Inputs {
  readonly url: string | null;
  readonly options: UseQueryOptions<any, any> | undefined;
  readonly requestOptions: RequestOptions | undefined;
  /** The request, or undefined without one (no URL, or it did not resolve). */
  readonly spec: RequestSpec | undefined;
  /** Why the URL or options did not resolve (the query's error). */
  readonly resolveError: unknown;
  /**
   * What `watchEnvironment` arms, defaults applied: once per change of the options, for the
   * hooks' effect dependencies too (equal values re-arm nothing, and no array per render).
   */
  readonly focus: boolean;
  readonly reconnect: boolean;
  readonly interval: number | false;
}

/** Before the first render: a null URL and no options (the other fields read as undefined). */
const NO_INPUTS = { url: null } as Inputs;

/** Observing the key: a URL that resolves and `enabled` not false. */
function isActive(inputs: Inputs): boolean {
  // A checked boolean or undefined (on, the default): only false is off.
  return inputs.spec !== undefined && inputs.options?.enabled !== false;
}

/**
 * The inputs of a render with `url` and `options`: `current` when neither object changed (a
 * render with the same ones resolves nothing). Throws when an option is invalid; a URL that does
 * not resolve is the query's error instead (a render does not crash on it).
 */
export function inputsOf(
  store: QueryStore,
  url: string | null,
  options: UseQueryOptions<any, any> | undefined,
  current: Inputs,
): Inputs {
  // The checks come after the identity check: a render they refuse changes no inputs, so the
  // next render with the same options checks (and refuses) them again.
  if (url === current.url && options === current.options) return current;
  const interval = options?.refetchInterval;
  if (interval !== undefined && interval !== false) {
    // At most the 32-bit timer limit: past it a timer fires after 1 ms.
    checkNumber('refetchInterval', interval, INTERVAL, (n) => n > 0 && n <= 2147483647);
  }
  if (options?.select !== undefined) checkFunction('select', options.select);
  checkSwitches(options);
  const requestOptions = url === null ? undefined : requestOptionsOf(options);
  let spec: RequestSpec | undefined;
  let resolveError: unknown;
  if (url !== null) {
    try {
      spec = store.client.resolve('GET', url, requestOptions);
    } catch (err) {
      // An invalid URL or option is the query's error, not a crash of the render.
      resolveError = err;
    }
  }
  return {
    url,
    options,
    requestOptions,
    spec,
    resolveError,
    // Checked switches (true by default: only false is off) and interval (false by default).
    focus: options?.refetchOnWindowFocus !== false,
    reconnect: options?.refetchOnReconnect !== false,
    interval: interval ?? false,
  };
}

/**
 * The per-component side of useQuery. It turns the store's QueryState into a result, and gives
 * `useSyncExternalStore` a snapshot whose identity changes only when a field the component has
 * read changes (fields it never read do not re-render it; if it has read none, all count).
 *
 *   render ─ beginRender(): latest view from the current state; the snapshot is that view
 *   store change ─ getSnapshot(): new view; the snapshot changes only if a read field changed
 */
interface Shown {
  readonly key: string;
  readonly data: unknown;
}

export class QueryObserver {
  readonly #tracking = new TrackedView<View>();
  /** The inputs of the last render. */
  #inputs: Inputs = NO_INPUTS;
  /**
   * The inputs of the last committed render: what `refetch()` acts on. A render React throws away
   * (a transition still pending) changes `#inputs` only.
   */
  #committed: Inputs = NO_INPUTS;
  // Derived.
  #state: QueryState | undefined;
  #latest: View | undefined;
  #token: View | undefined;
  #select: Selection | undefined;
  /** The data the committed UI showed, and for which key: what `placeholderData` is given. */
  #shown: Shown | undefined;
  /** Data a render not yet committed showed: `#shown` once React commits that render. */
  #rendered: { inputs: Inputs; shown: Shown } | undefined;
  #placeholder: unknown;
  #initial: { key: string; value: unknown } | undefined;
  #manual: (() => void) | undefined;
  #onChange: (() => void) | undefined;

  /** The client's query store (a parameter property: no getter over a private field). */
  constructor(readonly store: QueryStore) {}

  /** The cache key, or undefined without a request (null URL or an invalid one). */
  get key(): string | undefined {
    return this.#inputs.spec?.key;
  }

  /** Observing the key: a URL that resolves and `enabled` not false. */
  get active(): boolean {
    return isActive(this.#inputs);
  }

  /** The inputs of this render, for `commit` (a new object only when they change). */
  get inputs(): Inputs {
    return this.#inputs;
  }

  /** Called after React committed the render that had `inputs` (in an effect). */
  commit(inputs: object): void {
    this.#committed = inputs as Inputs;
    if (this.#rendered?.inputs === inputs) {
      this.#shown = this.#rendered.shown;
      this.#rendered = undefined;
    }
  }

  /**
   * Called at the start of each render with the hook's arguments: a URL, or a QueryDefinition
   * whose options the given ones add to (merged once per change of either, not per render).
   */
  setQuery(
    query: string | null | QueryDefinition<any, any>,
    options: UseQueryOptions<any, any> | undefined,
    /** useSuspenseQuery's: it always reads, and renders only its key's data. */
    suspense = false,
  ): void {
    // Not a definition (an object without a string `url`, a URL object): given to the core as
    // the URL, whose error names what it is.
    let url = query as string | null;
    const defined = isDefinition(query);
    // (A URL's own options carry neither unless untyped code passed them.)
    if (defined || (suspense && hasUnread(options))) {
      let merged = this.#merged;
      if (merged?.query !== query || merged.options !== options) {
        // An option given as undefined is not set: the definition's own stays.
        let combined = options;
        if (defined) {
          combined =
            options === undefined ? query.options : { ...query.options, ...coreOptions(options) };
        }
        // A definition shared with a lazily enabled useQuery (or untyped code) may carry them:
        // neither applies here, as in TanStack's useSuspenseQuery.
        if (suspense && hasUnread(combined)) {
          combined = { ...combined, enabled: undefined, placeholderData: undefined };
        }
        merged = this.#merged = { query, options, combined };
      }
      if (defined) url = query.url;
      options = merged.combined;
    }
    this.#inputs = inputsOf(this.store, url, options, this.#inputs);
  }
  #merged:
    | {
        query: string | null | QueryDefinition<any, any>;
        options: UseQueryOptions<any, any> | undefined;
        combined: UseQueryOptions<any, any> | undefined;
      }
    | undefined;

  /**
   * Called at the start of a render with inputs `inputsOf` made (`useQueries` works out each
   * row's key first, to match rows to observers, then hands each observer its inputs once).
   */
  adopt(inputs: Inputs): void {
    this.#inputs = inputs;
  }

  /** Called once per render: the latest view becomes the snapshot React renders. */
  beginRender(): View {
    this.#derive();
    return (this.#token = this.#latest!);
  }

  /** For useSyncExternalStore (client and server). */
  getSnapshot = (): View => {
    this.#derive();
    if (this.#token === undefined || this.#tracking.changed(this.#token, this.#latest!)) {
      this.#token = this.#latest;
    }
    return this.#token!;
  };

  /**
   * Brings `#latest` up to date. The view is derived again only when what it is derived from
   * changed: the state, the inputs, or a manual observation (`isFetching` reads it); a render
   * with none of them new (a parent's re-render) allocates nothing and calls no `placeholderData`.
   */
  #derive(): void {
    const state = this.#currentState();
    // By fields: a key nothing observes yet reads a new state object per snapshot.
    if (
      !sameFields(state, this.#state ?? {}) ||
      this.#inputs !== this.#from ||
      this.#manual !== this.#fromManual
    ) {
      this.#state = state;
      this.#from = this.#inputs;
      this.#fromManual = this.#manual;
      const next = this.#compute(state);
      // The previous view object stays while nothing in it changed.
      if (this.#latest === undefined || !sameFields(this.#latest, next)) this.#latest = next;
    }
  }
  /** The inputs and manual observation `#latest` was derived with. */
  #from: Inputs | undefined;
  #fromManual: (() => void) | undefined;

  /** For useSyncExternalStore: observes the key while the component is mounted. */
  subscribe(onChange: () => void): () => void {
    this.#onChange = onChange;
    // Subscribing happens once React committed a render (useCommit ran first).
    const inputs = this.#committed;
    const spec = inputs.spec!;
    let release: (() => void) | undefined;
    // Active: it has a spec.
    if (isActive(inputs)) {
      const entry = this.#entry(inputs);
      const initial = this.#initialData(inputs, spec.key);
      const { client } = this.store;
      // Written into the cache (with the spec) when the key has no data yet.
      if (
        initial !== undefined &&
        entry.state.response === undefined &&
        client.getCached(spec.key) === undefined
      ) {
        client.setCached(spec, syntheticResponse(initial));
      }
      release = entry.observe(onChange, true);
    } else if (spec) {
      // Disabled: shows what the key holds as it changes, without observing it (no interest).
      release = this.store.follow(spec.key, onChange);
    }
    return () => {
      release?.();
      this.#manual?.();
      this.#manual = undefined;
      if (this.#onChange === onChange) this.#onChange = undefined;
    };
  }

  /** The result for this render, with read tracking. Same object while the view is unchanged. */
  result(): QueryResult<any, any> {
    return this.#tracking.wrap(this.#latest!) as QueryResult<any, any>;
  }

  refetch = async (): Promise<QueryResult<any, any>> => {
    // What the UI on screen shows: not a render React may still throw away.
    const inputs = this.#committed;
    const { spec } = inputs;
    // Unmounted (or not mounted yet): nothing renders a read, so none is sent (see the README).
    if (spec && this.#onChange) {
      if (!isActive(inputs) && !this.#manual) {
        // A disabled query fetched by hand: observe it (without an automatic read) so it renders,
        // also when another component observes the key (the entry exists, but not for this one).
        this.#manual = this.#entry(inputs).observe(this.#onChange, false);
      }
      await this.store.peek(spec.key)?.refetch();
    }
    // The current result outside render: a plain object, not tracked.
    if (this.#committed !== this.#inputs) {
      // A new object already (not the view on screen).
      return this.#compute(this.#currentState(this.#committed), this.#committed);
    }
    this.getSnapshot();
    return { ...this.#latest! } as QueryResult<any, any>;
  };

  /** Focus, reconnect and interval refetching while mounted; returns the cleanup. */
  watchEnvironment(): () => void {
    const offs: (() => void)[] = [];
    // The key and options committed when armed (only an active query is armed): a render of
    // another key that is not committed (a suspended transition) neither moves nor stops them.
    const { spec, focus, reconnect, interval } = this.#committed;
    const key = spec!.key;
    const revalidate = () => this.store.peek(key)?.revalidate();
    if (focus) offs.push(onSignal('focus', revalidate));
    if (reconnect) offs.push(onSignal('online', revalidate));
    // A positive number of ms or false (setInputs refused anything else).
    if (interval) {
      // On the client's clock (which has no setInterval): each tick arms the next one.
      const { clock } = this.store;
      const tick = () => {
        timer = clock.setTimeout(tick, interval);
        // Quiet: an open circuit drops a tick silently, as the core drops its own refetches.
        if (!isDocumentHidden()) void this.store.peek(key)?.refetch(true);
      };
      let timer = clock.setTimeout(tick, interval);
      offs.push(() => clock.clearTimeout(timer));
    }
    return () => {
      for (const off of offs) off();
    };
  }

  /**
   * With `suspense`: throws instead of rendering while there is no data. An error with no data is
   * thrown to the error boundary and held (every render throws it again, none reads again) until
   * a boundary reset, after which the key is read again; a key with nothing yet suspends on its
   * read (the promise is thrown). On the server nothing is read: a NoServerDataError sends the
   * boundary to the browser.
   */
  suspend(): void {
    const view = this.#latest!;
    const inputs = this.#inputs;
    const { spec } = inputs;
    if (view.status === 'error' && view.data === undefined) {
      const entry = spec && this.store.peek(spec.key);
      // `select` threw over this response: held as a read's error is, and read again from the
      // network after a boundary reset (the response may be fresh, and the same data would give
      // the same throw for ever). By response, not by observer: the boundary remounts the query.
      const response = this.#select?.thrown && this.#state?.response;
      if (response) {
        const { selectThrew, resets } = this.store;
        const at = selectThrew.get(response) ?? resets;
        selectThrew.set(response, at);
        if (at < resets) throw this.#entry(inputs).suspend(true);
      }
      // A read in flight, or an error from before a boundary reset: wait for a read (started now).
      if (entry?.stale) throw entry.suspend();
      entry?.hold();
      throw view.error;
    }
    // Active: it has a spec.
    if (!isActive(inputs) || view.status !== 'pending') return;
    throw isServer ? new NoServerDataError(spec!.key) : this.#entry(inputs).suspend();
  }

  #entry(inputs: Inputs): QueryEntry {
    return this.store.entry(inputs.spec!, inputs.url!, inputs.requestOptions);
  }

  // ── view derivation ───────────────────────────────────────────────────────────────────────

  #currentState(inputs: Inputs = this.#inputs): QueryState {
    const { spec } = inputs;
    if (spec === undefined) {
      if (inputs.resolveError === undefined) return PENDING;
      return { ...PENDING, status: 'error', error: inputs.resolveError };
    }
    const entry = this.store.peek(spec.key);
    if (entry !== undefined) return entry.state;
    // Not observed yet (first render, server render) or disabled: read the cache directly.
    const cached = cachedState(this.store.client, spec.key);
    if (cached.response !== undefined) return cached;
    const initial = this.#initialData(inputs, spec.key);
    if (initial !== undefined) return { ...PENDING, status: 'success', data: initial };
    // Nothing cached: an active query reads as soon as it mounts, so it is already "fetching".
    return isActive(inputs) ? { ...PENDING, isFetching: true } : PENDING;
  }

  #compute(state: QueryState, inputs: Inputs = this.#inputs): View {
    const { options } = inputs;
    const key = inputs.spec?.key ?? '';
    let status = state.status;
    let raw = state.data;
    let isPlaceholderData = false;
    const hasData = status === 'success' || state.response !== undefined;
    const placeholderData = options?.placeholderData;
    if (hasData) {
      // On screen only once committed: a render React throws away (a transition that suspended)
      // must not become the next key's placeholder.
      const shown = { key, data: raw };
      if (inputs === this.#committed) this.#shown = shown;
      else this.#rendered = { inputs, shown };
    } else if (status === 'pending' && placeholderData !== undefined) {
      // Another key's data (none before any was shown).
      const previous = this.#shown?.key !== key ? this.#shown?.data : undefined;
      const placeholder =
        typeof placeholderData === 'function' ? placeholderData(previous) : placeholderData;
      if (placeholder !== undefined) {
        // Shared with the last one: a function returning a new equal object per call (an inline
        // one runs again at each render: new options) must not change the view.
        raw = this.#placeholder = replaceEqualDeep(this.#placeholder, placeholder);
        status = 'success';
        isPlaceholderData = true;
      }
    }
    let data = raw;
    let error = state.error;
    if (options?.select !== undefined && (hasData || isPlaceholderData)) {
      // `select` runs again only for new input or a new function, and its output is shared.
      const memo = (this.#select = select(this.#select, options.select, raw));
      data = memo.output;
      if (memo.thrown) {
        error = memo.thrown.error;
        status = 'error';
      }
    }
    // A disabled query (unless fetched by hand) observes nothing, so it would never see a read
    // end (disabling one mid-read cancels it): it shows none.
    const isFetching = state.isFetching && (isActive(inputs) || this.#manual !== undefined);
    return {
      data,
      error,
      status,
      isPending: status === 'pending',
      isLoading: status === 'pending' && isFetching,
      isFetching,
      isSuccess: status === 'success',
      isError: status === 'error',
      isPlaceholderData,
      refetch: this.refetch,
      response: isPlaceholderData ? undefined : state.response,
    };
  }

  #initialData(inputs: Inputs, key: string): unknown {
    const initial = inputs.options?.initialData;
    if (typeof initial !== 'function') return initial;
    // A function runs once per key, not on every render.
    if (this.#initial?.key !== key) this.#initial = { key, value: initial() };
    return this.#initial.value;
  }
}

/**
 * The inputs of a definition of `useQueries` (its URL and own options), or of anything else as
 * the URL (the core's error names what it is); `current` when unchanged.
 */
export function definitionInputs(
  store: QueryStore,
  query: QueryDefinition<any, any>,
  current: Inputs = NO_INPUTS,
): Inputs {
  return isDefinition(query)
    ? inputsOf(store, query.url, query.options, current)
    : inputsOf(store, query as unknown as string | null, undefined, current);
}

/** Options useSuspenseQuery does not apply: `enabled` or `placeholderData`. */
function hasUnread(options: UseQueryOptions<any, any> | undefined): boolean {
  return options?.enabled !== undefined || options?.placeholderData !== undefined;
}

/** A QueryDefinition: an object with a string `url` (not a URL object, not null). */
function isDefinition(query: unknown): query is QueryDefinition<any, any> {
  return (
    typeof query === 'object' &&
    query !== null &&
    typeof (query as { url?: unknown }).url === 'string'
  );
}
