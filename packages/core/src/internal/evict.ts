/**
 * Drops the oldest entry of an insertion-ordered Map that `mayEvict` accepts and returns its
 * value. An entry it refuses is moved to the back (so a busy or stateful entry is not rescanned
 * first next time); at most `scan` entries are looked at, so the cost per call is bounded and
 * the map may stay over its cap while every entry it looked at is refused.
 *
 * Used by the per-endpoint tables (circuits, intelligence records, adaptive profiles) to stay
 * bounded when paths carry ids (`/items/123`).
 */
export function evictOldest<K, V>(
  map: Map<K, V>,
  mayEvict: (value: V) => boolean,
  scan: number,
): V | undefined {
  for (let i = 0; i < scan && map.size > 0; i++) {
    const [key, value] = map.entries().next().value as [K, V];
    map.delete(key);
    if (mayEvict(value)) return value;
    map.set(key, value);
  }
  return undefined;
}
