/** True when `value` has a callable `then`. Reading `then` runs app code: it may throw. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}

/**
 * A native promise as it is (it settles once); any other thenable adopted by one, as `await`
 * does, so a `then` that throws becomes a rejection and one that calls back twice is heard once
 * (a second call would reach whatever the callbacks serve by then, e.g. a recycled request slot).
 */
export function settled(value: PromiseLike<unknown>): Promise<unknown> {
  return value instanceof Promise ? value : Promise.resolve(value);
}
