/**
 * Structural sharing: returns `prev` when `next` is deep-equal to it, otherwise `next` with every
 * deep-equal subtree replaced by the matching subtree of `prev`. A render that compares by
 * identity then sees "unchanged" for an equal write, and memoized children keep their props.
 *
 * Only plain objects and arrays are walked (JSON-shaped data, what a response body parses to);
 * anything else (Date, Map, class instances) is compared by identity and taken from `next`.
 */
export function replaceEqualDeep<T>(prev: unknown, next: T): T {
  if (prev === next) return prev as T;
  const prevIsArray = Array.isArray(prev);
  if (prevIsArray !== Array.isArray(next)) return next;
  if (!prevIsArray && !(isPlainObject(prev) && isPlainObject(next))) return next;

  const a = prev as Record<string, unknown>;
  const b = next as Record<string, unknown>;
  const aKeys = prevIsArray ? undefined : Object.keys(a);
  const bKeys = prevIsArray ? undefined : Object.keys(b);
  const aSize = prevIsArray ? (a as unknown as unknown[]).length : aKeys!.length;
  const bSize = prevIsArray ? (b as unknown as unknown[]).length : bKeys!.length;
  const copy: Record<string, unknown> = prevIsArray
    ? ([] as unknown as Record<string, unknown>)
    : {};
  let equalItems = 0;
  for (let i = 0; i < bSize; i++) {
    const key = prevIsArray ? (i as unknown as string) : bKeys![i]!;
    const inPrev = prevIsArray ? i < aSize : Object.hasOwn(a, key);
    const value = inPrev ? replaceEqualDeep(a[key], b[key]) : b[key];
    copy[key] = value;
    if (inPrev && value === a[key]) equalItems++;
  }
  return (aSize === bSize && equalItems === aSize ? prev : copy) as T;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
