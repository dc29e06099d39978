import type {
  ApiResponse,
  QueryParams,
  RequestError,
  RequestOptions,
  RequestSpec,
} from '@keel/core';
import { shown } from '@keel/core/internals';
import { coreOptions } from '../internal/core-options';
import { onSignal } from '../internal/environment';
import { replaceEqualDeep } from '../internal/equal';
import { jsonText } from '../internal/json-text';
import { noop } from '../internal/report';
import { type Selection, select } from '../internal/select';
import { checkSwitches } from '../internal/switches';
import { sameFields, TrackedView } from '../internal/tracked-view';
import { QUERY_DEFAULTS } from '../query/hook-options';
import type { QueryState, QueryStatus } from '../query/state';
import type { QueryStore } from '../query/store';

/** The pages of an infinite query, in order, with the page param each was read with. */
export interface InfiniteData<TPage, TPageParam> {
  pages: TPage[];
  pageParams: TPageParam[];
}

/** Options of `useInfiniteQuery`: every core RequestOptions field plus the paging ones. */
export interface UseInfiniteQueryOptions<TPage, TPageParam, TData = InfiniteData<TPage, TPageParam>>
  extends Omit<RequestOptions, 'body' | 'signal' | 'method' | 'url'> {
  /** The page param of the first page (a cursor, a page number; `null` for "from the start"). */
  initialPageParam: TPageParam;
  /**
   * The page param of the page after `lastPage`, or `null` / `undefined` when there is none
   * (then `hasNextPage` is false).
   */
  getNextPageParam: (
    lastPage: TPage,
    pages: TPage[],
    lastPageParam: TPageParam,
    pageParams: TPageParam[],
  ) => TPageParam | null | undefined;
  /**
   * The query parameters that ask for the page of `pageParam`, merged over `params`. A `null`
   * or `undefined` value is left out of the URL (the first page of a cursor API).
   * @default (pageParam) => ({ page: pageParam })
   */
  paramsFor?: ((pageParam: TPageParam) => QueryParams) | undefined;
  /**
   * `false`: no request and no interest.
   * @default true
   */
  enabled?: boolean | undefined;
  /**
   * Derives what `data` holds from the pages; structurally shared.
   * @default none
   */
  select?: ((data: InfiniteData<TPage, TPageParam>) => TData) | undefined;
  /**
   * Refetch every loaded page when the window regains focus.
   * @default true
   */
  refetchOnWindowFocus?: boolean | undefined;
  /**
   * Refetch every loaded page when the browser goes back online.
   * @default true
   */
  refetchOnReconnect?: boolean | undefined;
}

/** What `useInfiniteQuery` returns. */
export interface InfiniteQueryResult<TData, TError = RequestError> {
  /** The pages loaded so far (after `select`); undefined until the first page arrives. */
  data: TData | undefined;
  /** The last error of any page; null when none. */
  error: TError | null;
  /** `pending` until the first page; `error` when a page failed (the loaded pages stay). */
  status: QueryStatus;
  isPending: boolean;
  isLoading: boolean;
  isSuccess: boolean;
  isError: boolean;
  /** A read of any page is in flight. */
  isFetching: boolean;
  /** `getNextPageParam` gave a param for the last loaded page. */
  hasNextPage: boolean;
  /** The next page is being read. */
  isFetchingNextPage: boolean;
  /** Reads the next page (nothing when there is none or it is being read); settles when it has. */
  fetchNextPage: () => Promise<void>;
  /** Reads every loaded page from the network again; settles when all have. */
  refetch: () => Promise<void>;
}

interface Page {
  readonly param: unknown;
  readonly spec: RequestSpec;
  readonly options: RequestOptions;
}

/** The most pages restored from the cache when a query mounts (a guard against a param cycle). */
const MAX_RESTORED_PAGES = 1000;

const INFINITE_OPTIONS = new Set([
  'initialPageParam',
  'getNextPageParam',
  'paramsFor',
  'enabled',
  'select',
  'refetchOnWindowFocus',
  'refetchOnReconnect',
]);

type AnyOptions = UseInfiniteQueryOptions<any, any, any>;
type View = InfiniteQueryResult<unknown, unknown>;

/** The pages of one request (URL and request options), however many renders show it. */
interface List {
  readonly url: string | null;
  readonly base: RequestOptions;
  /** Replaced (never changed in place) when `fetchNextPage` adds one, once filled. */
  pages: Page[];
  /** Why the first page (or, from fetchNextPage, the next one) did not resolve. */
  error: unknown;
}

/** The inputs of one render: its list and options. */
interface Inputs {
  readonly list: List;
  readonly options: AnyOptions;
  /**
   * What `watchEnvironment` arms, defaults applied: once per change of the options, read by the
   * hook's effect too (as useQuery's: options of the same meaning re-arm nothing).
   */
  readonly focus: boolean;
  readonly reconnect: boolean;
}

/** Observing the pages: a URL, a first page that resolved, and `enabled` not false. */
function isActive(inputs: Inputs): boolean {
  return (
    inputs.list.url !== null && inputs.list.pages.length > 0 && inputs.options.enabled !== false
  );
}

/**
 * The per-component side of useInfiniteQuery. Each page is an ordinary query of the store (its
 * own key: the URL with the page's params), so pages share dedup, caching, interest, the
 * invalidation refetch (every loaded page is read again, with the param it was loaded with)
 * and gcTime with every other query. This observer keeps the list of pages and composes their
 * states into one result; like useQuery's, its snapshot changes identity only when a field the
 * component read changes.
 */
export class InfiniteObserver {
  readonly #store: QueryStore;
  /** The inputs of the last render. */
  #inputs: Inputs | undefined;
  /**
   * The inputs of the last committed render: what `fetchNextPage()`, `refetch()` and the focus
   * and reconnect listeners act on. A render React throws away (a transition still pending)
   * changes `#inputs` only.
   */
  #committed: Inputs | undefined;
  /** While subscribed: the release function of each observed page, by key. */
  #observed: Map<string, () => void> | undefined;
  #onChange: (() => void) | undefined;
  readonly #tracking = new TrackedView<View>();
  /** The composed result of the current page states (kept while equal in every field). */
  #latest: View | undefined;
  /** What useSyncExternalStore last got: the view rendered, until a field read from it changes. */
  #token: View | undefined;
  #viewOf: readonly (QueryState | undefined)[] = [];
  #pagesData: unknown[] | undefined;
  #select: Selection | undefined;

  constructor(store: QueryStore) {
    this.#store = store;
  }

  get store(): QueryStore {
    return this.#store;
  }

  /** The first page's key, or undefined (no URL, an invalid one, or disabled). */
  get key(): string | undefined {
    const inputs = this.#inputs!;
    return isActive(inputs) ? inputs.list.pages[0]?.spec.key : undefined;
  }

  /** The inputs of this render, for `commit` (a new object only when they change). */
  get inputs(): Inputs {
    return this.#inputs!;
  }

  /** Called after React committed the render that had `inputs` (in an effect). */
  commit(inputs: object): void {
    this.#committed = inputs as Inputs;
  }

  /**
   * Called at the start of each render; a new URL or request starts the list over. The list of
   * the committed render is kept for a render of the same request, so a render React threw away
   * (a transition to another URL, still pending) does not lose the pages on screen.
   */
  setInputs(url: string | null, options: AnyOptions): void {
    const current = this.#inputs;
    if (current?.list.url === url && current.options === options) return;
    if (typeof options?.getNextPageParam !== 'function') {
      throw new TypeError(
        `keel: useInfiniteQuery \`getNextPageParam\` must be a function, got ${shown(options?.getNextPageParam)}`,
      );
    }
    checkSwitches(options);
    if (options.paramsFor !== undefined && typeof options.paramsFor !== 'function') {
      throw new TypeError(
        `keel: useInfiniteQuery \`paramsFor\` must be a function, got ${shown(options.paramsFor)}`,
      );
    }
    // The view depends on the options too (`select`, `enabled`): compose it again.
    this.#viewOf = [];
    const same = (inputs: Inputs | undefined) =>
      inputs !== undefined && inputs.list.url === url && sameRequest(inputs.options, options);
    const list = same(current)
      ? current!.list
      : same(this.#committed)
        ? this.#committed!.list
        : this.#newList(url, options);
    this.#inputs = {
      list,
      options,
      focus: options.refetchOnWindowFocus ?? QUERY_DEFAULTS.refetchOnWindowFocus,
      reconnect: options.refetchOnReconnect ?? QUERY_DEFAULTS.refetchOnReconnect,
    };
  }

  #newList(url: string | null, options: AnyOptions): List {
    const list: List = { url, base: requestOptionsOf(options), pages: [], error: undefined };
    if (url === null) return list;
    try {
      list.pages = [this.#page(options.initialPageParam, list, options)];
      this.#restore(list, options);
    } catch (error) {
      // An invalid URL or option is the query's error, not a crash of the render.
      list.error = error;
    }
    return list;
  }

  subscribe = (onChange: () => void): (() => void) => {
    this.#onChange = onChange;
    const observed = new Map<string, () => void>();
    this.#observed = observed;
    // Subscribing happens once React committed a render (useCommit ran first).
    const inputs = this.#committed;
    if (inputs !== undefined && isActive(inputs))
      for (const page of inputs.list.pages) this.#observe(page, inputs.list);
    return () => {
      for (const release of observed.values()) release();
      observed.clear();
      if (this.#observed === observed) this.#observed = undefined;
      if (this.#onChange === onChange) this.#onChange = undefined;
    };
  };

  /** Called once per render: the latest view becomes the snapshot React renders. */
  beginRender(): void {
    this.#compute();
    this.#token = this.#latest;
  }

  getSnapshot = (): View => {
    this.#compute();
    if (this.#token === undefined || this.#tracking.changed(this.#token, this.#latest!)) {
      this.#token = this.#latest;
    }
    return this.#token!;
  };

  /** The result for this render, with read tracking. */
  result(): View {
    return this.#tracking.wrap(this.#latest!);
  }

  /** Composes the view again when a page's state changed; keeps it when equal in every field. */
  #compute(): View {
    const inputs = this.#inputs!;
    const states = this.#statesOf(inputs.list);
    if (this.#latest !== undefined && sameStates(states, this.#viewOf)) return this.#latest;
    this.#viewOf = states;
    const next = this.#compose(states, inputs);
    if (this.#latest === undefined || !sameFields(this.#latest, next)) this.#latest = next;
    return this.#latest;
  }

  fetchNextPage = (): Promise<void> => {
    // What the UI on screen shows: not a render React may still throw away.
    const inputs = this.#committed;
    if (inputs === undefined || !isActive(inputs)) return Promise.resolve();
    const { list, options } = inputs;
    const states = this.#statesOf(list);
    const view = inputs === this.#inputs ? this.#compute() : this.#compose(states, inputs);
    if (view.isFetchingNextPage) return Promise.resolve();
    const last = list.pages.at(-1)!;
    if (list.pages.length > 1 && states.at(-1)?.response === undefined) {
      // The next page failed (or was cancelled): read it again.
      const entry = this.#store.peek(last.spec.key);
      entry?.fetch();
      return entry?.read() ?? Promise.resolve();
    }
    if (!view.hasNextPage) return Promise.resolve();
    let page: Page;
    try {
      const next = this.#nextParam(list.pages.length - 1, list, options);
      if (next === undefined) return Promise.resolve();
      page = this.#page(next, list, options);
    } catch (error) {
      // A paramsFor that throws (or a page URL that does not resolve) is the query's error, as a
      // getNextPageParam that throws: the loaded pages stay, nothing is thrown at the caller.
      list.error = error;
      this.#viewOf = [];
      this.#onChange?.();
      return Promise.resolve();
    }
    list.pages = [...list.pages, page];
    if (this.#observed === undefined) return Promise.resolve();
    this.#observe(page, list);
    this.#onChange?.();
    return this.#store.peek(page.spec.key)?.read() ?? Promise.resolve();
  };

  refetch = (): Promise<void> => {
    // Unmounted: nothing is sent, as useQuery's refetch().
    const pages = this.#observed ? (this.#committed?.list.pages ?? []) : [];
    return Promise.all(pages.map((p) => this.#store.peek(p.spec.key)?.refetch())).then(noop);
  };

  /**
   * Focus and reconnect revalidate every loaded page (cache-first: stale ones only), as the
   * committed render's options say.
   */
  watchEnvironment(): () => void {
    const { focus, reconnect } = this.#committed!;
    const revalidate = () => {
      for (const page of this.#committed?.list.pages ?? []) {
        this.#store.peek(page.spec.key)?.revalidate();
      }
    };
    const offs = [
      focus ? onSignal('focus', revalidate) : noop,
      reconnect ? onSignal('online', revalidate) : noop,
    ];
    return () => {
      for (const off of offs) off();
    };
  }

  // ── pages ─────────────────────────────────────────────────────────────────────────────────

  #page(param: unknown, list: List, options: AnyOptions): Page {
    const paramsFor = options.paramsFor ?? defaultParamsFor;
    const pageOptions: RequestOptions = {
      ...list.base,
      params: { ...list.base.params, ...paramsFor(param) },
    };
    return {
      param,
      spec: this.#store.client.resolve('GET', list.url!, pageOptions),
      options: pageOptions,
    };
  }

  #observe(page: Page, list: List): void {
    const observed = this.#observed!;
    if (observed.has(page.spec.key)) return;
    const release = this.#store.entry(page.spec, list.url!, page.options).observe(this.#wake, true);
    observed.set(page.spec.key, release);
  }

  #wake = (): void => {
    this.#onChange?.();
  };

  /** Pages still cached from an earlier mount come back at once (back navigation keeps its place). */
  #restore(list: List, options: AnyOptions): void {
    try {
      for (let i = 0; i < MAX_RESTORED_PAGES; i++) {
        if (this.#store.client.getCached(list.pages[i]!.spec.key) === undefined) return;
        const next = this.#nextParam(i, list, options);
        if (next === undefined) return;
        const page = this.#page(next, list, options);
        if (this.#store.client.getCached(page.spec.key) === undefined) return;
        list.pages.push(page);
      }
    } catch {
      // A getNextPageParam that throws ends the list here: the view shows its error.
    }
  }

  /** The param after page `index`, from its data; undefined when it has none or no data yet. */
  #nextParam(index: number, list: List, options: AnyOptions): unknown {
    const pages: unknown[] = [];
    for (let i = 0; i <= index; i++) {
      const state = this.#stateOf(list.pages[i]!.spec.key);
      if (state === undefined || state.response === undefined) return undefined;
      pages.push(state.data);
    }
    const params = list.pages.slice(0, index + 1).map((p) => p.param);
    const next = options.getNextPageParam(pages.at(-1), pages, params.at(-1), params);
    return next ?? undefined;
  }

  #statesOf(list: List): (QueryState | undefined)[] {
    return list.pages.map((p) => this.#stateOf(p.spec.key));
  }

  #stateOf(key: string): QueryState | undefined {
    const entry = this.#store.peek(key);
    if (entry !== undefined) return entry.state;
    const response = this.#store.client.getCached(key);
    return response === undefined ? undefined : cachedState(response);
  }

  // ── the composed result ───────────────────────────────────────────────────────────────────

  #compose(states: readonly (QueryState | undefined)[], inputs: Inputs): View {
    const { list, options } = inputs;
    const active = isActive(inputs);
    const loaded: unknown[] = [];
    let error: unknown = list.error ?? null;
    let isFetching = false;
    for (let i = 0; i < states.length; i++) {
      const state = states[i];
      if (state === undefined) {
        isFetching ||= active;
        continue;
      }
      // A disabled list observes nothing (disabling it mid-read cancels the read): no fetch shown.
      if (state.isFetching && active) isFetching = true;
      if (state.status === 'error') error = state.error;
      // Only an unbroken run from the first page is data: a later page alone is not shown.
      if (state.response !== undefined && loaded.length === i) loaded.push(state.data);
    }
    const hasData = loaded.length > 0;
    const pagesData = hasData ? this.#sharedPages(loaded) : undefined;
    let data: unknown;
    if (pagesData !== undefined) {
      const raw = {
        pages: pagesData,
        pageParams: list.pages.slice(0, loaded.length).map((p) => p.param),
      };
      if (options.select) {
        const selected = this.#selected(raw, options.select);
        data = selected.output;
        // A select that throws is the query's error, over the last good selection (as useQuery).
        if (selected.thrown) error = selected.thrown.error;
      } else data = this.#sharedData(raw);
    }
    const last = states.length - 1;
    let hasNextPage = false;
    try {
      // From the last loaded page (TanStack's rule): the page after it, being read or failed,
      // is a next page (fetchNextPage reads a failed one again).
      hasNextPage =
        hasData &&
        (loaded.length === states.length
          ? this.#nextParam(last, list, options) !== undefined
          : loaded.length === last);
    } catch (thrown) {
      // A getNextPageParam that throws is the query's error (as a throwing select), no crash.
      error = thrown;
    }
    const status: QueryStatus =
      error !== null && error !== undefined ? 'error' : hasData ? 'success' : 'pending';
    const isFetchingNextPage = last > 0 && loaded.length <= last && isFetching;
    return {
      data,
      error: status === 'error' ? error : null,
      status,
      isPending: status === 'pending',
      isLoading: !hasData && isFetching,
      isSuccess: status === 'success',
      isError: status === 'error',
      isFetching,
      hasNextPage,
      isFetchingNextPage,
      fetchNextPage: this.fetchNextPage,
      refetch: this.refetch,
    };
  }

  /** The pages array keeps its identity while every page's data does. */
  #sharedPages(loaded: unknown[]): unknown[] {
    const previous = this.#pagesData;
    if (
      previous !== undefined &&
      previous.length === loaded.length &&
      previous.every((d, i) => d === loaded[i])
    ) {
      return previous;
    }
    this.#pagesData = loaded;
    return loaded;
  }

  #lastData: InfiniteData<unknown, unknown> | undefined;

  #sharedData(raw: InfiniteData<unknown, unknown>): InfiniteData<unknown, unknown> {
    const last = this.#lastData;
    if (
      last !== undefined &&
      last.pages === raw.pages &&
      last.pageParams.length === raw.pageParams.length &&
      last.pageParams.every((p, i) => Object.is(p, raw.pageParams[i]))
    ) {
      return last;
    }
    this.#lastData = raw;
    return raw;
  }

  #selected(raw: InfiniteData<unknown, unknown>, fn: (data: any) => unknown): Selection {
    this.#select = select(this.#select, fn, this.#sharedData(raw));
    return this.#select;
  }
}

function defaultParamsFor(pageParam: unknown): QueryParams {
  return { page: pageParam as string | number };
}

function cachedState(response: ApiResponse): QueryState {
  return { status: 'success', response, data: response.data, error: null, isFetching: false };
}

function sameStates(
  a: readonly (QueryState | undefined)[],
  b: readonly (QueryState | undefined)[],
): boolean {
  return a.length === b.length && a.every((s, i) => s === b[i]);
}

/**
 * Whether two option objects ask for the same requests (the paging functions may be inline, and
 * so may an object `initialPageParam`: compared by value, or each render would start over).
 */
function sameRequest(a: AnyOptions | undefined, b: AnyOptions | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  const first = a.initialPageParam;
  return (
    requestText(a) === requestText(b) &&
    (Object.is(first, b.initialPageParam) || replaceEqualDeep(first, b.initialPageParam) === first)
  );
}

/** The request options as text, to compare (a Headers object by its entries). */
function requestText(options: AnyOptions): string {
  return jsonText(requestOptionsOf(options));
}

/** The options the core understands, without the paging and React ones. */
function requestOptionsOf(options: AnyOptions | undefined): RequestOptions {
  return coreOptions(options, INFINITE_OPTIONS) ?? {};
}
