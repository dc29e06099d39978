import type { RequestOptions } from '@keel/core';

/**
 * The fields of a hook's `options` that the core understands: every defined field except the
 * hook's own (`hookOnly`; without it, every defined field). A new object each call (callers may
 * add to it); undefined when no field is left.
 */
export function coreOptions(
  options: object | undefined,
  hookOnly?: ReadonlySet<string>,
): RequestOptions | undefined {
  let request: Record<string, unknown> | undefined;
  for (const name in options) {
    const value = (options as Record<string, unknown>)[name];
    if (value !== undefined && !hookOnly?.has(name)) (request ??= {})[name] = value;
  }
  return request;
}
