/**
 * `value` as a promise when it is a thenable, else null: a native promise as it is (it settles
 * once; no `then` read), any other thenable adopted by one, as `await` does, so a `then` that
 * throws becomes a rejection and one that calls back twice is heard once (a second call would
 * reach whatever the callbacks serve by then, e.g. a recycled request slot). Reading `then` runs
 * app code: it may throw, so call this inside the caller's try.
 */
export function promiseOf(value: unknown): Promise<unknown> | null {
  if (value instanceof Promise) return value;
  return value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as PromiseLike<unknown>).then === 'function'
    ? Promise.resolve(value)
    : null;
}
