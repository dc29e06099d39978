import { replaceEqualDeep } from './equal';

/** The last run of a hook's `select`: its input and output, and what it threw if it did. */
export interface Selection {
  readonly fn: (data: any) => unknown;
  readonly input: unknown;
  /** Structurally shared with the previous output; the previous one when `select` threw. */
  readonly output: unknown;
  /** What `select` threw, in a box (a thrown undefined is still a throw); none when it returned. */
  readonly thrown?: { error: unknown };
}

/**
 * Runs `fn` on `input` unless `memo` already did (same function, same input). A throw is kept
 * as the selection's error over the last good output (the hooks show it as the query's error,
 * as TanStack Query does), not thrown into the render.
 */
export function select(
  memo: Selection | undefined,
  fn: (data: any) => unknown,
  input: unknown,
): Selection {
  if (memo?.fn === fn && memo.input === input) return memo;
  try {
    return { fn, input, output: replaceEqualDeep(memo?.output, fn(input)) };
  } catch (error) {
    return { fn, input, output: memo?.output, thrown: { error } };
  }
}
