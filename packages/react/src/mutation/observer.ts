import type {
  ApiResponse,
  Client,
  HttpMethod,
  HttpMethodInput,
  InvalidateTarget,
  RequestError,
  RequestOptions,
  RequestSpec,
  RetryOptions,
} from '@keel/core';
import { afterWrite, checkInvalidateTarget, freeze, shown } from '@keel/core/internals';
import { coreOptions } from '../internal/core-options';
import { noop, reportError } from '../internal/report';
import { requestOptionsOf as requestOptionsOfQuery } from '../query/hook-options';
import { syntheticResponse } from '../query/state';
import type { QueryStore } from '../query/store';
import type { QueryDefinition } from '../query-options';
import { addSourceHeader } from '../server-events/source';
import { type RunningMutation, startMutation } from './registry';

export type MutationStatus = 'idle' | 'pending' | 'success' | 'error';

/** Handed to `onMutate`: reads and optimistic writes of cached queries, rolled back on error. */
export interface OptimisticHelpers {
  client: Client;
  /**
   * Cancels the reads in flight that `target` matches (a path, an array of tags or a predicate,
   * as for `client.invalidate`), so that a refetch started before this mutation cannot land on
   * top of the optimistic data. Call it before `setQueryData`. Returns the cancelled keys.
   */
  cancelReads(target: InvalidateTarget): string[];
  /**
   * The data a GET query shows (same URL and options as its `useQuery`, or its `queryOptions`):
   * the data on screen while a component shows it (also during an invalidation refetch, or with
   * a read held back for a running optimistic mutation), else the cached data.
   */
  getQueryData<T = unknown>(url: string, options?: RequestOptions): T | undefined;
  getQueryData<T>(query: QueryDefinition<T, any>): T | undefined;
  /**
   * Writes a query's cached data; every component showing it re-renders. Recorded: if the
   * mutation fails, each key written gets back exactly what it held before.
   */
  setQueryData<T = unknown>(
    url: string,
    updater: T | ((previous: T | undefined) => T),
    options?: RequestOptions,
  ): void;
  setQueryData<T>(
    query: QueryDefinition<T, any>,
    updater: T | ((previous: T | undefined) => T),
  ): void;
}

/** Options of `useMutation`: core request options plus the lifecycle callbacks. */
export interface UseMutationOptions<
  TData = unknown,
  TVars = void,
  TContext = unknown,
  TError = RequestError,
> extends Omit<RequestOptions, 'body' | 'signal' | 'method' | 'url'> {
  /**
   * The request body for the variables.
   * @default the variables themselves for POST, PUT and PATCH; no body for DELETE and the
   * other methods (their variables usually go into the URL)
   */
  body?: ((variables: TVars) => unknown) | undefined;
  /**
   * Runs before the request: optimistic updates (through `helpers`); what it returns is the
   * `context` the other callbacks get.
   * @default none
   */
  onMutate?:
    | ((variables: TVars, helpers: OptimisticHelpers) => TContext | Promise<TContext>)
    | undefined;
  /**
   * Runs when the request succeeded, before `mutate`'s own `onSuccess`.
   * @default none
   */
  onSuccess?:
    | ((data: TData, variables: TVars, context: TContext | undefined) => unknown)
    | undefined;
  /**
   * Runs when the request failed, after the optimistic writes have been rolled back.
   * @default none
   */
  onError?:
    | ((error: TError, variables: TVars, context: TContext | undefined) => unknown)
    | undefined;
  /**
   * Runs after `onSuccess` or `onError`, whatever the outcome.
   * @default none
   */
  onSettled?:
    | ((
        data: TData | undefined,
        error: TError | null,
        variables: TVars,
        context: TContext | undefined,
      ) => unknown)
    | undefined;
  /**
   * More to invalidate after success, on top of the core's own invalidation (the request path and
   * its `tags`): one invalidation target, meaning exactly what it means for `client.invalidate`:
   * a string is a path (`'/todos'`: the list and everything under it), an array of strings is
   * tags, a function is a predicate over CacheMeta. Any other value is a TypeError at render.
   * @default none
   */
  invalidate?: InvalidateTarget | undefined;
  /**
   * Retry policy of this mutation's request. The core's default is method-aware; pass `false`
   * for a single attempt, or a RetryOptions object.
   * @default the client's retry options
   */
  retry?: boolean | RetryOptions | undefined;
}

/**
 * Per-call callbacks of `mutate(variables, callbacks)`, run after the hook's own, for the latest
 * call only: not when the component has unmounted by then, nor for a call that a newer one or
 * `reset()` superseded (the hook's own still run for every call).
 */
export interface MutateCallbacks<TData, TVars, TError = RequestError> {
  onSuccess?: ((data: TData, variables: TVars) => unknown) | undefined;
  onError?: ((error: TError, variables: TVars) => unknown) | undefined;
  onSettled?:
    | ((data: TData | undefined, error: TError | null, variables: TVars) => unknown)
    | undefined;
}

export interface MutationState<TData, TVars, TError = RequestError> {
  readonly status: MutationStatus;
  readonly data: TData | undefined;
  readonly response: ApiResponse<TData> | undefined;
  readonly error: TError | null;
  readonly variables: TVars | undefined;
}

const IDLE: MutationState<any, any, any> = /* @__PURE__ */ freeze({
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
 * useSyncExternalStore). Only the latest call writes the state and runs mutate's own callbacks;
 * an older call that settles late still runs the hook's callbacks but changes nothing shown.
 */
export class MutationObserver<TData, TVars, TContext, TError = RequestError> {
  readonly #listeners = new Set<() => void>();
  #state: MutationState<TData, TVars, TError> = IDLE;
  #call = 0;
  /** The inputs of the last render. */
  #inputs: MutationInputs<TData, TVars, TContext, TError> | undefined;
  /**
   * The inputs of the last committed render: what `mutate` sends and whose callbacks it calls. A
   * render React throws away (a transition to another URL, still pending) changes `#inputs` only.
   */
  #committed: MutationInputs<TData, TVars, TContext, TError> | undefined;

  /** The client's query store (a parameter property: no getter over a private field). */
  constructor(readonly store: QueryStore) {}

  setInputs(
    method: HttpMethodInput,
    url: string | ((variables: TVars) => string),
    options: UseMutationOptions<TData, TVars, TContext, TError> | undefined,
  ): void {
    if (typeof url !== 'string' && typeof url !== 'function') {
      throw new TypeError(
        `keel: useMutation \`url\` must be a string or a function, got ${shown(url)}`,
      );
    }
    if (options?.invalidate !== undefined) checkInvalidateTarget(options.invalidate, 'invalidate');
    const current = this.#inputs;
    if (current?.given === method && current.url === url && current.options === options) return;
    // The core takes any case ('post'); the body rule below reads the upper-case name.
    const upper = (typeof method === 'string' ? method.toUpperCase() : method) as HttpMethod;
    this.#inputs = { given: method, method: upper, url, options };
  }

  /** The inputs of this render, for `commit` (a new object only when they change). */
  get inputs(): object {
    return this.#inputs!;
  }

  /** Called after React committed the render that had `inputs` (in an effect). */
  commit(inputs: object): void {
    this.#committed = inputs as MutationInputs<TData, TVars, TContext, TError>;
  }

  /** What is on screen: the committed inputs (those of this render before the first commit). */
  #shown(): MutationInputs<TData, TVars, TContext, TError> {
    return this.#committed ?? this.#inputs!;
  }

  subscribe = (listener: () => void): (() => void) => {
    const entry = () => listener();
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  };

  getSnapshot = (): MutationState<TData, TVars, TError> => this.#state;

  reset = (): void => {
    this.#setIf(++this.#call, IDLE);
  };

  mutate = (variables: TVars, callbacks?: MutateCallbacks<TData, TVars, TError>): void => {
    // Fire and forget: the outcome is in the state and the callbacks, never an unhandled rejection.
    this.#run(variables, callbacks).catch(noop);
  };

  mutateAsync = (
    variables: TVars,
    callbacks?: MutateCallbacks<TData, TVars, TError>,
  ): Promise<TData> => this.#run(variables, callbacks);

  async #run(
    variables: TVars,
    callbacks: MutateCallbacks<TData, TVars, TError> | undefined,
  ): Promise<TData> {
    const call = ++this.#call;
    const { method, url: urlOption, options } = this.#shown();
    const client = this.store.client;
    const writes: OptimisticWrites = [];
    let context: TContext | undefined;
    this.#setIf(call, { ...IDLE, status: 'pending', variables });
    let end: (succeeded?: boolean, now?: number) => void = noop;
    let running: RunningMutation | undefined;
    let response: ApiResponse<TData> | undefined;
    let data: TData | undefined;
    let error: TError | null = null;
    /** Apart from `error`: what was thrown may be any value, `undefined` and `null` included. */
    let failed = false;
    // On success, as the reaction to it: an invalidation (the `invalidate` option, or the common
    // `client.invalidate(...)` of TanStack Query habits in a callback) keeps the refetch the core
    // started after the answer, instead of sending it again (see afterWrite). Until one returns a
    // promise: then time passed, and what the next one invalidates may have changed since. A GET,
    // HEAD or OPTIONS mutation is no write the core marks: its invalidations apply in full.
    let reacting = !'GET HEAD OPTIONS'.includes(method);
    // settle: what a callback or invalidation throws is reported, the outcome stays.
    const settleAfter = (fn: () => unknown) =>
      settle(() => {
        if (!reacting) return fn();
        const out = afterWrite(client, fn) as PromiseLike<unknown> | undefined;
        if (typeof out?.then === 'function') reacting = false;
        return out;
      });
    try {
      const url = typeof urlOption === 'function' ? urlOption(variables) : urlOption;
      const request: RequestOptions = coreOptions(options, HOOK_OPTIONS) ?? {};
      // Same-origin only: names this tab, so it skips the server's echo of this change.
      addSourceHeader(client, url, request);
      running = { method, url, options: request, invalidate: options?.invalidate };
      end = startMutation(this.store.mutations, running);
      if (options?.onMutate) context = await options.onMutate(variables, this.#helpers(writes));
      const body = options?.body
        ? options.body(variables)
        : BODY_METHODS.has(method)
          ? variables
          : undefined;
      if (body !== undefined) request.body = body;
      // The core invalidates the request path and tags (refetching mounted queries) before this resolves.
      response = await client.request<TData>(method, url, request);
      data = response.data;
      const target = this.#shown().options?.invalidate;
      if (target !== undefined) await settleAfter(() => client.invalidate(target));
    } catch (err) {
      // As thrown (TanStack passes it on too): a validation object keeps its fields.
      failed = true;
      error = err as TError;
      rollBack(this.store, writes, running?.skipped);
    }
    // After the rollback (its writes show) and the success invalidation (its refetch is in flight).
    this.store.release(writes.map((w) => w.spec.key));
    writes.done = true;
    this.#setIf(
      call,
      failed
        ? { ...IDLE, status: 'error', error, variables }
        : { status: 'success', data, response, error: null, variables },
    );
    end(!failed, this.store.clock.now());
    // Callbacks run after the state is settled, the hook's first, those of the latest render
    // (as TanStack Query does: a callback closing over props sees the current ones); a throwing
    // callback is reported, it does not turn a success into a failure.
    const latest = this.#shown().options;
    reacting &&= !failed;
    await settleAfter(() =>
      failed
        ? latest?.onError?.(error as TError, variables, context)
        : latest?.onSuccess?.(data as TData, variables, context),
    );
    await settleAfter(() => latest?.onSettled?.(data, error, variables, context));
    // mutate's own callbacks belong to the component and its latest call (TanStack's rule):
    // none once it has unmounted, or for a call a newer one (or reset) superseded.
    const current = () => this.#listeners.size > 0 && call === this.#call;
    if (current()) {
      await settleAfter(() =>
        failed
          ? callbacks?.onError?.(error as TError, variables)
          : callbacks?.onSuccess?.(data as TData, variables),
      );
    }
    if (current()) await settleAfter(() => callbacks?.onSettled?.(data, error, variables));
    if (failed) throw error;
    return data as TData;
  }

  #helpers(writes: OptimisticWrites): OptimisticHelpers {
    const store = this.store;
    const client = store.client;
    // What a key shows: what its components show (the cache may hold nothing, during an
    // invalidation refetch, or a read held back for a running mutation), else the cached response.
    const shown = (key: string) => store.peek(key)?.state.response ?? client.getCached(key);
    const specOf = (query: string | QueryDefinition<any, any>, options?: RequestOptions) =>
      typeof query === 'string'
        ? client.resolve('GET', query, options)
        : client.resolve('GET', query.url, requestOptionsOfQuery(query.options));
    return {
      client,
      cancelReads: (target) => client.cancelReads(target),
      getQueryData: (query: string | QueryDefinition<any, any>, options?: RequestOptions) =>
        shown(specOf(query, options).key)?.data,
      setQueryData: (
        query: string | QueryDefinition<any, any>,
        updater: unknown,
        options?: RequestOptions,
      ) => {
        const spec = specOf(query, options);
        // What the key shows: the cache, or (while an invalidation refetch runs) the data on screen.
        const current = shown(spec.key);
        // Before anything is recorded: an updater that throws leaves nothing to roll back.
        const next =
          typeof updater === 'function'
            ? (updater as (previous: unknown) => unknown)(current?.data)
            : updater;
        // Only the first write of a key records what to restore; the last one what it wrote.
        // What the cache held, not the screen: while an invalidation's refetch runs (or after
        // cancelReads cut it) the screen shows data the cache dropped, which a rollback must
        // not make fresh again (the key is read again instead).
        let write = writes.find((w) => w.spec.key === spec.key);
        if (write === undefined) {
          write = { spec, previous: client.getCached(spec.key), written: undefined };
          // Helpers kept past the mutation's end write plainly: nothing would release the key.
          if (!writes.done) {
            writes.push(write);
            store.pending.push(spec.key);
          }
        }
        write.written = syntheticResponse(next, current);
        store.writeShown(() => client.setCached(target(client, spec), write.written));
      },
    } as OptimisticHelpers;
  }

  /** The state becomes `next` if `call` is still the latest (reset counts as one). */
  #setIf(call: number, next: MutationState<TData, TVars, TError>): void {
    if (call !== this.#call || next === this.#state) return;
    this.#state = next;
    for (const listener of this.#listeners) listener();
  }
}

/**
 * What an optimistic write (or its rollback) goes to: the key of an entry the cache holds, which
 * keeps the request, ttl and tags its query stored it with (a spec of the URL alone dropped
 * them, and a tag invalidation then missed the key); the spec for a key with none.
 */
function target(client: Client, spec: RequestSpec): string | RequestSpec {
  return client.getCached(spec.key) === undefined ? spec : spec.key;
}

/** One key an `onMutate` wrote: what it held before, and what the mutation wrote last. */
interface OptimisticWrite {
  readonly spec: RequestSpec;
  readonly previous: ApiResponse | undefined;
  written: ApiResponse | undefined;
}

/** The writes of one call; `done` once it settled (and released its keys). */
type OptimisticWrites = OptimisticWrite[] & { done?: boolean };

/**
 * Undoes a failed mutation's optimistic writes. A key that still holds what the mutation wrote
 * gets back exactly what it held before (nothing with nothing to put back: its entry forgets the
 * data and reads again). A key written since (a refetch, another mutation's optimistic write) is
 * not given the older snapshot, which could drop what the server said meanwhile or bring back
 * another failed mutation's row: it is invalidated, so a mounted query reads the server's list.
 */
function rollBack(
  store: QueryStore,
  writes: readonly OptimisticWrite[],
  skipped: readonly InvalidateTarget[] | undefined,
): void {
  const { client } = store;
  const stale: string[] = [];
  store.writeShown(() => {
    for (let i = writes.length - 1; i >= 0; i--) {
      const { spec, previous, written } = writes[i]!;
      if (client.getCached(spec.key) !== written) {
        stale.push(spec.key);
        continue;
      }
      client.setCached(target(client, spec), previous);
      if (previous === undefined) store.peek(spec.key)?.reset();
    }
  });
  if (stale.length > 0) client.invalidate((meta) => stale.includes(meta.key));
  // The server's echoes of this change, skipped while it ran (server-events/echo.ts): a failed
  // request invalidates nothing, yet the server may have applied it.
  for (const target of skipped ?? []) client.invalidate(target);
}

/** The inputs of one render of useMutation. */
interface MutationInputs<TData, TVars, TContext, TError> {
  /** The method as given (to tell a change). */
  readonly given: HttpMethodInput;
  readonly method: HttpMethod;
  readonly url: string | ((variables: TVars) => string);
  readonly options: UseMutationOptions<TData, TVars, TContext, TError> | undefined;
}

/** Runs a user callback (sync or async); what it throws is reported, not propagated. */
async function settle(fn: () => unknown): Promise<void> {
  try {
    await fn();
  } catch (err) {
    reportError(err);
  }
}
