// Black-box harness: only the public surface of @keel/core (src/index) is used by these tests.
// The clock is the spec's injectable one; the backend is a scripted `fetch` (the spec's
// injectable fetch, ClientOptions.fetch) that answers with real `Response` objects, so every
// byte the client reads goes through the platform's Response parsing.
import {
  type Client,
  type ClientEventName,
  type ClientOptions,
  createClient,
} from '../../src/index';

interface Timer {
  id: number;
  at: number;
  fn: () => void;
}

/** A manual clock: time moves only through `advance`. */
export class ManualClock {
  time = 1_000_000;
  private seq = 0;
  private timers: Timer[] = [];
  now = (): number => this.time;
  setTimeout = (fn: () => void, ms: number): number => {
    const id = ++this.seq;
    this.timers.push({ id, at: this.time + Math.max(0, ms || 0), fn });
    return id;
  };
  clearTimeout = (id: unknown): void => {
    this.timers = this.timers.filter((t) => t.id !== id);
  };
  get pending(): number {
    return this.timers.length;
  }
  /** Moves time forward by `ms`, firing due timers in order and letting promises settle. */
  async advance(ms: number): Promise<void> {
    const end = this.time + ms;
    await flush();
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at || a.id - b.id);
      const next = this.timers[0];
      if (!next || next.at > end) break;
      this.timers.shift();
      this.time = Math.max(this.time, next.at);
      next.fn();
      await flush();
    }
    this.time = end;
    await flush();
  }
}

/** Lets every queued microtask and promise chain run (real macrotask turns). */
export async function flush(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((r) => setImmediate(r));
}

export interface SeenRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  signal: AbortSignal | undefined;
}

type Answer = Response | Promise<Response>;
type Handler = (req: SeenRequest) => Answer;

/** A scripted backend behind the injectable fetch. */
export class Backend {
  calls: SeenRequest[] = [];
  handler: Handler = () => json({ ok: true });
  fetch = (input: unknown, init?: Record<string, unknown>): Promise<Response> => {
    const url =
      typeof input === 'string' ? input : String((input as { url?: string }).url ?? input);
    const rawHeaders = (init?.headers ?? {}) as HeadersInit;
    const headers: Record<string, string> = {};
    new Headers(rawHeaders).forEach((v, k) => {
      headers[k] = v;
    });
    const req: SeenRequest = {
      method: String(init?.method ?? 'GET'),
      url,
      headers,
      body: init?.body,
      signal: init?.signal as AbortSignal | undefined,
    };
    this.calls.push(req);
    const signal = req.signal;
    return new Promise<Response>((resolve, reject) => {
      if (signal?.aborted)
        return reject(signal.reason ?? new DOMException('aborted', 'AbortError'));
      signal?.addEventListener(
        'abort',
        () => reject(signal.reason ?? new DOMException('aborted', 'AbortError')),
        {
          once: true,
        },
      );
      Promise.resolve()
        .then(() => this.handler(req))
        .then(resolve, reject);
    });
  };
}

export function json(value: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(status === 204 ? null : JSON.stringify(value), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

/** A response that arrives when `release` is called (or never). */
export function deferred(): { promise: Promise<Response>; release: (r: Response) => void } {
  let release!: (r: Response) => void;
  const promise = new Promise<Response>((r) => {
    release = r;
  });
  return { promise, release };
}

export const ALL_EVENTS = [
  'request',
  'success',
  'error',
  'retry',
  'cancel',
  'dedup',
  'cache-hit',
  'cache-write',
  'invalidate',
  'revalidate',
  'circuit-open',
  'circuit-half-open',
  'circuit-closed',
  'circuit-rejected',
  'request-queued',
  'request-dequeued',
  'request-started',
  'request-delayed',
  'request-scheduled',
  'request-prioritized',
  'request-rejected',
  'queue-paused',
  'queue-resumed',
] as const satisfies readonly ClientEventName[];

export type Recorded = { event: string; payload: Record<string, unknown> };

export function record(client: Client, events: readonly string[] = ALL_EVENTS): Recorded[] {
  const log: Recorded[] = [];
  for (const event of events) {
    client.on(
      event as ClientEventName,
      ((payload: Record<string, unknown>) => {
        log.push({ event, payload });
      }) as never,
    );
  }
  return log;
}

export function names(log: Recorded[]): string[] {
  return log.map((r) => r.event);
}

export function setup(options: ClientOptions = {}) {
  const clock = new ManualClock();
  const backend = new Backend();
  const client = createClient({
    baseURL: 'https://api.test',
    fetch: backend.fetch as never,
    clock,
    random: () => 0.5,
    ...options,
  } as ClientOptions);
  return { clock, backend, client };
}

/** Settles a promise into a value or the error, so a rejection is never unhandled. */
export function settle<T>(
  p: Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  return p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}
