import { type ErrorReporter, logListenerError, report } from './report';

/**
 * Calls `run(item, arg)` for each pushed pair on a later microtask, in push order, with one
 * queued microtask per burst: a way to step out of the caller's stack (the scheduler's dispatch
 * loop) with no promise or closure per item. Items pushed while a batch runs go to the next one.
 */
export class MicrotaskBatch<T, A> {
  #items: T[] = [];
  #args: A[] = [];
  readonly #run: (item: T, arg: A) => void;
  readonly #onError: ErrorReporter;

  constructor(run: (item: T, arg: A) => void, onError: ErrorReporter = logListenerError) {
    this.#run = run;
    this.#onError = onError;
  }

  push(item: T, arg: A): void {
    if (this.#items.length === 0) queueMicrotask(this.#flush);
    this.#items.push(item);
    this.#args.push(arg);
  }

  readonly #flush = (): void => {
    const items = this.#items;
    const args = this.#args;
    this.#items = [];
    this.#args = [];
    for (let i = 0; i < items.length; i++) {
      try {
        this.#run(items[i]!, args[i]!);
      } catch (err) {
        // One item's failure must not strand the rest of the batch.
        report(this.#onError, err, { source: 'internal' });
      }
    }
  };
}
