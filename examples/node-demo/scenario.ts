import type { Client, ClientOptions } from '@keel/core';
import type { Tally } from './events';
import type { Narrator } from './narrator';
import type { DemoServer } from './server';

/** What every scenario gets: the client under test, the misbehaving server, and the story so far. */
export interface DemoContext {
  readonly client: Client;
  readonly server: DemoServer;
  readonly log: Narrator;
  /** Live counters from the client's events. */
  readonly tally: Readonly<Tally>;
  /**
   * Another client, for a section that needs options the main client must not have (a scheduler,
   * the adaptive engine): pointed at the demo server, cancelled when the demo ends, and listed
   * under `label` in the final intelligence table.
   */
  extraClient(label: string, options: ClientOptions): Client;
}

/**
 * One section of the demo. `run` narrates what it does and throws if keel did not behave as the
 * section claims, so the demo fails loudly (exit code 1) instead of printing a wrong story.
 */
export interface Scenario {
  readonly title: string;
  readonly story: string;
  run(ctx: DemoContext): Promise<void>;
}

export function expect(condition: boolean, message: string): void {
  if (!condition) throw new Error(`demo expectation failed: ${message}`);
}

/** A request's response, or the error it rejected with (for sections that expect failures). */
export function settle(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => value,
    (error: unknown) => error,
  );
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/** Polls until `check` holds (for effects seen on the server a moment after the client acts). */
export async function waitFor(check: () => boolean, what: string, ms = 1000): Promise<void> {
  const until = performance.now() + ms;
  while (!check()) {
    expect(performance.now() < until, what);
    await new Promise((r) => setTimeout(r, 10));
  }
}
