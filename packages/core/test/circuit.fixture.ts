/**
 * A client wired to a fake fetch and a FakeClock, with a per-path script of answers, and a log of
 * the lifecycle and circuit events. Shared by the circuit and intelligence tests.
 */
import { HttpError } from '../src/errors/http-error';
import type { Client } from '../src/types/client';
import type { ClientEventName, ClientEvents } from '../src/types/events';
import type { ClientOptions } from '../src/types/options';
import {
  createTestClient,
  FakeClock,
  type FakeFetch,
  type FetchCall,
  fetchFrom,
  jsonResponse,
} from './helpers';

export const BASE = 'http://api.test';

/**
 * What the fake server does for a path: a status (JSON body), `network` (fetch rejects like a
 * dropped connection), `hang` (left pending for the test to answer), or `parse` (200 with a body
 * that is not JSON).
 */
export type Answer = number | 'network' | 'hang' | 'parse';

export interface Harness {
  client: Client;
  clock: FakeClock;
  fake: FakeFetch;
  /** Sets the answer for a pathname (default 200). */
  answer(path: string, answer: Answer): void;
  /** Events in order: name and payload. */
  log: { name: ClientEventName; payload: unknown }[];
  names(filter?: (name: ClientEventName) => boolean): ClientEventName[];
  count(name: ClientEventName): number;
  /** Fetch calls made for a pathname. */
  callsTo(path: string): FetchCall[];
}

const LOGGED: ClientEventName[] = [
  'request',
  'success',
  'error',
  'retry',
  'cancel',
  'dedup',
  'cache-hit',
  'revalidate',
  'circuit-open',
  'circuit-half-open',
  'circuit-closed',
  'circuit-rejected',
];

/**
 * Defaults for circuit tests: threshold 3, resetTimeout 1000 ms, one attempt, no cache (so every
 * request reaches the guard); each test overrides what it needs.
 */
export function harness(options: ClientOptions = {}): Harness {
  const clock = new FakeClock();
  const answers = new Map<string, Answer>();
  const fake = fetchFrom((call) => {
    const path = new URL(call.url).pathname;
    const a = answers.get(path) ?? 200;
    if (a === 'hang') return undefined;
    if (a === 'network') {
      call.fail(new TypeError('fetch failed'));
      return undefined;
    }
    if (a === 'parse') {
      return new Response('{not json', { headers: { 'content-type': 'application/json' } });
    }
    return jsonResponse({ path, status: a }, { status: a });
  });
  const client = createTestClient({
    baseURL: BASE,
    fetch: fake.fetch,
    clock,
    retry: { attempts: 1 },
    cache: { enabled: false },
    circuitBreaker: { failureThreshold: 3, resetTimeout: 1000 },
    ...options,
  });
  const log: Harness['log'] = [];
  for (const name of LOGGED) {
    client.on(name, (payload: ClientEvents[typeof name]) => log.push({ name, payload }));
  }
  return {
    client,
    clock,
    fake,
    answer: (path, a) => answers.set(path, a),
    log,
    names: (filter) => log.map((e) => e.name).filter((n) => !filter || filter(n)),
    count: (name) => log.filter((e) => e.name === name).length,
    callsTo: (path) => fake.calls.filter((c) => new URL(c.url).pathname === path),
  };
}

/** Runs a request to its end and returns its outcome without throwing. */
export async function outcome(
  p: Promise<unknown>,
): Promise<{ ok: true; value: unknown } | { ok: false; error: unknown }> {
  try {
    return { ok: true, value: await p };
  } catch (error) {
    return { ok: false, error };
  }
}

/** Sends `n` failing GETs (each with its own query, so none dedups) and waits for them. */
export async function fail(h: Harness, path: string, n: number, answer: Answer = 503) {
  h.answer(path, answer);
  for (let i = 0; i < n; i++) await outcome(h.client.get(`${path}?fail=${i}`));
}

export function isHttpStatus(error: unknown, status: number): boolean {
  return error instanceof HttpError && error.status === status;
}

/**
 * A harness whose /a circuit (threshold 3) is open with its reset window elapsed, /a hanging: the
 * next /a request is the half-open probe.
 */
export async function probeReady(): Promise<Harness> {
  const h = harness();
  h.answer('/a', 503);
  for (let i = 0; i < 3; i++) await outcome(h.client.get('/a'));
  await h.clock.advance(1000);
  h.answer('/a', 'hang');
  return h;
}
