/**
 * Helpers for the scheduler tests, on top of the shared ./helpers (FakeClock, fake fetch,
 * makeClient): a client with a scheduler and caching off, fetch-call paths, answering, and the
 * scheduler's event timeline.
 */
import type { ClientEventName, ClientOptions, SchedulerOptions } from '../src/index';
import {
  ALL_EVENTS,
  type FakeFetchOptions,
  jsonResponse,
  makeClient,
  type TestClient,
} from './helpers';

/** The scheduler's events: `request-queued` through `queue-resumed` in the shared list. */
export const SCHEDULER_EVENTS: readonly ClientEventName[] = ALL_EVENTS.slice(
  ALL_EVENTS.indexOf('request-queued'),
);

/** A client on a FakeClock with the given scheduler; caching off so every GET is a job. */
export function schedulerClient(
  scheduler: SchedulerOptions | undefined,
  options: ClientOptions = {},
  fetchOptions: FakeFetchOptions = {},
): TestClient {
  return makeClient({ cache: { enabled: false }, scheduler, ...options }, fetchOptions);
}

/** `path?query` of a URL (the host too when it is not the default test host). */
export function short(url: string): string {
  const u = new URL(url);
  const local = u.pathname + u.search;
  return u.host === 'api.test' ? local : `${u.host}${local}`;
}

/** The fetch calls made so far, as short URLs. */
export function calls(t: TestClient): string[] {
  return t.fake.calls.map((c) => short(c.url));
}

/** Answers one call (by short URL, default the oldest pending) with 200 `{}` and settles. */
export async function answer(t: TestClient, target?: string, response?: Response): Promise<void> {
  const call =
    target === undefined
      ? t.fake.pending()[0]
      : t.fake.pending().find((c) => short(c.url) === target);
  if (call === undefined) throw new Error(`no pending call ${target ?? ''}`);
  call.respond(response ?? jsonResponse({}));
  await t.clock.advance(0);
}

/** Answers pending calls, oldest first, until none is left (new ones included). */
export async function answerAll(t: TestClient, limit = 10_000): Promise<void> {
  // A job started by a synchronous call makes its fetch call a few microtasks later.
  await t.clock.advance(0);
  for (let i = 0; i < limit && t.fake.pending().length > 0; i++) await answer(t);
}

/** Scheduler events as `name short-url` (or `name group`) lines, in emission order. */
export function timeline(t: TestClient, names: readonly ClientEventName[] = SCHEDULER_EVENTS) {
  return t.events
    .filter((e) => names.includes(e.name))
    .map((e) => {
      const p = e.payload as { url?: string; group?: string };
      return `${e.name} ${p.url !== undefined ? short(p.url) : (p.group ?? '')}`;
    });
}
