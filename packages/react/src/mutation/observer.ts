import type {
  ApiResponse,
  Client,
  HttpMethod,
  InvalidateTarget,
  RequestOptions,
  RequestSpec,
} from '@keel/core';
import { noop, reportError } from '../internal/report';
import { syntheticResponse } from '../query/state';
import type { QueryStore } from '../query/store';
import { addSourceHeader } from '../server-events/source';

export type MutationStatus = 'idle' | 'pending' | 'success' | 'error';

/** Handed to `onMutate`: reads and optimistic writes of cached queries, rolled back on error. */
export interface OptimisticHelpers {
  client: Client;
  /** The cached data of a GET query (same URL and options as its `useQuery`). */
  getQueryData<T = unknown>(url: string, options?: RequestOptions): T | undefined;
  /**
   * Writes a query's cached data; every component showing it re-renders. Recorded: if the
   * mutation fails, each key written gets back exactly what it held before.
   */
  setQueryData<T = unknown>(
    url: string,
    updater: T | ((previous: T | undefined) => T),
    options?: RequestOptions,
  ): void;
}

/** Options of `useMutation`: core request options plus the lifecycle callbacks. */
export interface UseMutationOptions<TData = unknown, TVars = void, TContext = unknown>
  extends Omit<RequestOptions, 'method' | 'url' | 'body' | 'signal'> {
  /**
   * The request body for the variables. Default: the variables themselves for POST, PUT and
   * PATCH; no body for DELETE and the other methods (their variables usually go into the URL).
   */
  body?: (variables: TVars) => unknown;
  /** Runs before the request: optimistic updates (through `helpers`); returns a context value. */
  onMutate?: (variables: TVars, helpers: OptimisticHelpers) => TContext | Promise<TContext>;
  onSuccess?: (data: TData, variables: TVars, context: TContext | undefined) => unknown;
  /** Runs after the optimistic writes have been rolled back. */
  onError?: (error: Error, variables: TVars, context: TContext | undefined) => unknown;
  onSettled?: (
    data: TData | undefined,
    error: Error | null,
    variables: TVars,
    context: TContext | undefined,
  ) => unknown;
  /**
   * More to invalidate after success, on top of the core's own invalidation (the request path and
   * its `tags`): a list of targets (a path, an array of tags, or a predicate), or a function of
   * the result returning one.
   */
  invalidate?:
    | readonly InvalidateTarget[]
    | ((data: TData, variables: TVars) => readonly InvalidateTarget[]);
}

/** Per-call callbacks of `mutate(variables, callbacks)`, run after the hook's own. */
export interface MutateCallbacks<TData, TVars> {
  onSuccess?: (data: TData, variables: TVars) => unknown;
  onError?: (error: Error, variables: TVars) => unknown;
  onSettled?: (data: TData | undefined, error: Error | null, variables: TVars) => unknown;
}

export interface MutationState<TData, TVars> {
  readonly status: MutationStatus;
  readonly data: TData | undefined;
  readonly response: ApiResponse<TData> | undefined;
  readonly error: Error | null;
  readonly variables: TVars | undefined;
}

const IDLE: MutationState<any, any> = Object.freeze({
  status: 'idle',
  data: undefined,
  response: undefined,
  error: null,
  variables: undefined,
});

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
const HOOK_OPTIONS = new Set([
  'body',
  'onMutate',
  'onSuccess',
  'onError',
  'onSettled',
  'invalidate',
]);

/**
 * The state of one `useMutation`: a tiny external store (React reads it with
 * useSyncExternalStore). Only the latest call writes the state; an older call that settles late
 * still runs its callbacks but does not overwrite what the newer one shows.
 */
export class MutationObserver<TData, TVars, TContext> {
  readonly #store: QueryStore;
  readonly #listeners = new Set<() => void>();
  #state: MutationState<TData, TVars> = IDLE;
  #call = 0;
  #method: HttpMethod = 'POST';
  #url: string | ((variables: TVars) => string) = '';
  #options: UseMutationOptions<TData, TVars, TContext> | undefined = undefined;

  constructor(store: QueryStore) {
    this.#store = store;
  }

  get store(): QueryStore {
    return this.#store;
  }

  setInputs(
    method: HttpMethod,
    url: string | ((variables: TVars) => string),
    options: UseMutationOptions<TData, TVars, TContext> | undefined,
  ): void {
    if (typeof url !== 'string' && typeof url !== 'function') {
      throw new TypeError(
        `keel: useMutation url must be a string or a function, got ${typeof url}`,
      );
    }
    this.#method = method;
    this.#url = url;
    this.#options = options;
  }

  subscribe = (listener: () => void): (() => void) => {
    const entry = () => listener();
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  };

  getSnapshot = (): MutationState<TData, TVars> => this.#state;

  reset = (): void => {
    this.#call++;
    this.#set(IDLE);
  };

  mutate = (variables: TVars, callbacks?: MutateCallbacks<TData, TVars>): void => {
    // Fire and forget: the outcome is in the state and the callbacks, never an unhandled rejection.
    this.#run(variables, callbacks).catch(noop);
  };

  mutateAsync = (variables: TVars, callbacks?: MutateCallbacks<TData, TVars>): Promise<TData> =>
    this.#run(variables, callbacks);

  async #run(
    variables: TVars,
    callbacks: MutateCallbacks<TData, TVars> | undefined,
  ): Promise<TData> {
    const call = ++this.#call;
    const method = this.#method;
    const urlOption = this.#url;
    const options = this.#options;
    const client = this.#store.client;
    const writes: { spec: RequestSpec; previous: ApiResponse | undefined }[] = [];
    let context: TContext | undefined;
    this.#setIf(call, { ...IDLE, status: 'pending', variables });
    let response: ApiResponse<TData>;
    try {
      if (options?.onMutate) context = await options.onMutate(variables, this.#helpers(writes));
      const url = typeof urlOption === 'function' ? urlOption(variables) : urlOption;
      const request: RequestOptions = requestOptionsOf(options);
      // Same-origin only: names this tab, so it skips the server's echo of this change.
      addSourceHeader(client, url, request);
      const body = options?.body
        ? options.body(variables)
        : BODY_METHODS.has(method)
          ? variables
          : undefined;
      if (body !== undefined) request.body = body;
      // The core invalidates the request path and tags (refetching mounted queries) before this resolves.
      response = await client.request<TData>(method, url, request);
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      // Undo the optimistic writes newest first, so each key ends with what it held before.
      for (let i = writes.length - 1; i >= 0; i--) {
        this.#store.restore(writes[i]!.spec, writes[i]!.previous);
      }
      this.#setIf(call, { ...IDLE, status: 'error', error, variables });
      await settle(() => options?.onError?.(error, variables, context));
      await settle(() => options?.onSettled?.(undefined, error, variables, context));
      await settle(() => callbacks?.onError?.(error, variables));
      await settle(() => callbacks?.onSettled?.(undefined, error, variables));
      throw error;
    }
    const { data } = response;
    await settle(() => {
      const extra = options?.invalidate;
      const targets = typeof extra === 'function' ? extra(data, variables) : extra;
      if (targets) for (const target of targets) client.invalidate(target);
    });
    this.#setIf(call, { status: 'success', data, response, error: null, variables });
    // Callbacks run after the state is settled; a throwing callback is reported, it does not
    // turn the success into a failure.
    await settle(() => options?.onSuccess?.(data, variables, context));
    await settle(() => options?.onSettled?.(data, null, variables, context));
    await settle(() => callbacks?.onSuccess?.(data, variables));
    await settle(() => callbacks?.onSettled?.(data, null, variables));
    return data;
  }

  #helpers(writes: { spec: RequestSpec; previous: ApiResponse | undefined }[]): OptimisticHelpers {
    const client = this.#store.client;
    return {
      client,
      getQueryData: <T>(url: string, options?: RequestOptions) =>
        client.getCached<T>(client.resolve('GET', url, options).key)?.data,
      setQueryData: <T>(
        url: string,
        updater: T | ((previous: T | undefined) => T),
        options?: RequestOptions,
      ) => {
        const spec = client.resolve('GET', url, options);
        const current = client.getCached<T>(spec.key);
        // Only the first write of a key records what to restore.
        if (!writes.some((w) => w.spec.key === spec.key)) writes.push({ spec, previous: current });
        const next =
          typeof updater === 'function'
            ? (updater as (previous: T | undefined) => T)(current?.data)
            : updater;
        client.setCached(spec, syntheticResponse(next, current));
      },
    };
  }

  #setIf(call: number, next: MutationState<TData, TVars>): void {
    if (call === this.#call) this.#set(next);
  }

  #set(next: MutationState<TData, TVars>): void {
    if (next === this.#state) return;
    this.#state = next;
    for (const listener of this.#listeners) listener();
  }
}

/** Runs a user callback (sync or async); what it throws is reported, not propagated. */
async function settle(fn: () => unknown): Promise<void> {
  try {
    await fn();
  } catch (err) {
    reportError(err);
  }
}

function requestOptionsOf(options: UseMutationOptions<any, any, any> | undefined): RequestOptions {
  const request: Record<string, unknown> = {};
  if (options === undefined) return request;
  for (const name in options) {
    if (HOOK_OPTIONS.has(name)) continue;
    const value = (options as Record<string, unknown>)[name];
    if (value !== undefined) request[name] = value;
  }
  return request;
}
