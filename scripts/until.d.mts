/** Polls `check` every 10 ms until it holds; after `ms` (15 s unless given) fails naming `what`. */
export declare function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  ms?: number,
): Promise<void>;
