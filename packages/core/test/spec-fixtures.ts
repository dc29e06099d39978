/**
 * What the spec-conformance files share: an injected fetch answering by a route, a JSON
 * response, an event recorder, and the spec's list of scheduler events (restated from the spec,
 * not imported from the sources: these tests read only what a user reads).
 */
import type { Client, ClientEventName } from '../src/index';

export const BASE = 'https://api.test';

export interface Call {
  url: string;
  method: string;
  signal: AbortSignal | undefined;
  body?: unknown;
}

/** What a route answers: a response, a rejection, or `hang` (never, until the signal aborts). */
export type Reply = Response | Promise<Response> | 'hang' | Error;

/** A fetch answering by a route function; `calls` records every call. */
export function fakeFetch(route: (call: Call, n: number) => Reply) {
  const calls: Call[] = [];
  const fetch = (input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> => {
    const call: Call = {
      url: String(input),
      method: init.method ?? 'GET',
      signal: init.signal ?? undefined,
      body: init.body,
    };
    calls.push(call);
    const reply = route(call, calls.length);
    return new Promise<Response>((resolve, reject) => {
      const signal = call.signal;
      if (signal?.aborted) return reject(signal.reason);
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      if (reply === 'hang') return;
      if (reply instanceof Error) return reject(reply);
      Promise.resolve(reply).then(resolve, reject);
    });
  };
  return { fetch, calls };
}

/** A JSON response (a 204 has no body). */
export const json = (data: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(status === 204 ? null : JSON.stringify(data), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });

/** Every event of `names` in order, as [name, payload]. */
export function record(c: Client, names: ClientEventName[]) {
  const log: [ClientEventName, Record<string, unknown>][] = [];
  for (const name of names) {
    c.on(name, (payload: unknown) => log.push([name, payload as Record<string, unknown>]));
  }
  return log;
}

/** The spec's scheduler events, `request-queued` through `queue-resumed`. */
export const SCHEDULER_EVENTS: ClientEventName[] = [
  'request-queued',
  'request-dequeued',
  'request-started',
  'request-delayed',
  'request-scheduled',
  'request-prioritized',
  'request-rejected',
  'queue-paused',
  'queue-resumed',
];
