import { type Agent, type IncomingHttpHeaders, type IncomingMessage, request } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterEach } from 'vitest';
import type { Clock } from '../src/clock';
import { type App, createApp } from '../src/index';
import { eventWaiters, where } from './sse-wait';

/** Starts `app` on 127.0.0.1 port 0. */
export async function start(app: App): Promise<{ port: number; base: string }> {
  const server = await app.listen(0, '127.0.0.1');
  const { port } = server.address() as AddressInfo;
  return { port, base: `http://127.0.0.1:${port}` };
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  raw: Buffer;
}

/**
 * One request with the path sent exactly as given (fetch would normalize `..` and encodings).
 */
export function raw(
  port: number,
  options: {
    method?: string;
    path: string;
    headers?: Record<string, string | string[]>;
    body?: string | Buffer;
    agent?: Agent | false;
  },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'GET',
        path: options.path,
        headers: options.headers,
        agent: options.agent ?? false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const buf = Buffer.concat(chunks);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: buf.toString('utf8'),
            raw: buf,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/** Sends raw bytes on one socket; resolves with what came back before the server closed or `ms`. */
export function socketBytes(port: number, bytes: string, ms = 300): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    let out = '';
    s.setEncoding('latin1');
    s.on('data', (c: string) => {
      out += c;
    });
    s.on('error', reject);
    const timer = setTimeout(() => {
      s.destroy();
      resolve(out);
    }, ms);
    s.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
    s.write(bytes, 'latin1');
  });
}

/** A manual clock: timers run only on `tick`, and `active` counts what is left. */
export class ManualClock implements Clock {
  time = 0;
  #next = 1;
  readonly timers = new Map<number, { fn: () => void; due: number }>();

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): number {
    const id = this.#next++;
    this.timers.set(id, { fn, due: this.time + ms });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  get active(): number {
    return this.timers.size;
  }

  /** Advances time, firing due timers in order (a timer armed by one that fires can fire too). */
  tick(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      let nextId = -1;
      let nextDue = Number.POSITIVE_INFINITY;
      for (const [id, t] of this.timers) {
        if (t.due < nextDue) {
          nextDue = t.due;
          nextId = id;
        }
      }
      if (nextId === -1 || nextDue > end) break;
      const timer = this.timers.get(nextId)!;
      this.timers.delete(nextId);
      this.time = nextDue;
      timer.fn();
    }
    this.time = end;
  }
}

/** Resolves after pending I/O callbacks have had a chance to run. */
export function settle(rounds = 3): Promise<void> {
  return new Promise((resolve) => {
    let n = rounds;
    const step = (): void => {
      if (--n <= 0) resolve();
      else setImmediate(step);
    };
    setImmediate(step);
  });
}

/** Polls `check` on the event loop (no wall-clock assertions) until it holds. */
export async function until(check: () => boolean, rounds = 2000): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error('condition not reached');
}

export interface SseMessage {
  id?: string;
  event?: string;
  data: string;
}

export interface SseClient {
  status: number;
  headers: IncomingHttpHeaders;
  events: SseMessage[];
  comments: number;
  /** The last `retry:` the server sent (ms), if any: a block of it alone is no event. */
  retry?: number;
  ended: Promise<void>;
  /**
   * Waits until at least `n` events arrived; rejects after `ms` (10 s unless given) naming the
   * events received so far.
   */
  waitFor(n: number, ms?: number): Promise<void>;
  close(): void;
}

/** A minimal EventSource over node:http that records events and comment lines. */
export function sse(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      let buffer = '';
      const events: SseMessage[] = [];
      const waiters = eventWaiters(events, where(port, path, headers));
      let endResolve!: () => void;
      const client: SseClient = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        events,
        comments: 0,
        ended: new Promise<void>((r) => {
          endResolve = () => {
            waiters.end();
            r();
          };
        }),
        waitFor: (n, ms) => waiters.waitFor(n, ms),
        close: () => req.destroy(),
      };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let idx = buffer.indexOf('\n\n');
        while (idx !== -1) {
          const block = buffer.slice(0, idx);
          buffer = buffer.slice(idx + 2);
          const msg: SseMessage = { data: '' };
          const data: string[] = [];
          let isComment = true;
          let onlyRetry = true;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) continue;
            isComment = false;
            const colon = line.indexOf(':');
            const field = colon === -1 ? line : line.slice(0, colon);
            const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'retry' && /^\d+$/.test(value)) client.retry = Number(value);
            else onlyRetry = false;
            if (field === 'data') data.push(value);
            else if (field === 'id') msg.id = value;
            else if (field === 'event') msg.event = value;
          }
          if (isComment) client.comments++;
          else if (!onlyRetry) {
            msg.data = data.join('\n');
            client.events.push(msg);
          }
          idx = buffer.indexOf('\n\n');
        }
        waiters.notify();
      });
      res.on('end', () => endResolve());
      res.on('close', () => endResolve());
      res.on('error', () => endResolve());
      resolve(client);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * A `createApp` for one test file: every app it makes is closed after each test, so a failing
 * test cannot leave a listening server behind.
 */
export function trackApps(): (options?: Parameters<typeof createApp>[0]) => App {
  const apps: App[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
  });
  return (options) => {
    const app = createApp(options);
    apps.push(app);
    return app;
  };
}

/**
 * The apps and raw sockets of one test file: after each test the sockets are destroyed, then the
 * apps closed (100 ms for what is still open), so a failing test leaves no server behind.
 */
export function closedAfterEach(): { apps: App[]; sockets: Socket[] } {
  const apps: App[] = [];
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await Promise.all(apps.splice(0).map((a) => a.close({ timeoutMs: 100 })));
  });
  return { apps, sockets };
}

/**
 * A GET whose response is paused at once: the client reads nothing (so it does not see the
 * server close either). The request goes on `open`, for the test's afterEach to destroy.
 */
export function pausedGet(
  port: number,
  path: string,
  open: { destroy(): void }[],
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false });
    open.push(req);
    req.on('response', (res) => {
      res.pause();
      res.on('error', () => {});
      resolve(res);
    });
    req.on('error', reject);
    req.end();
  });
}

/** A raw connection: its socket, what it has read so far (latin1), and whether it closed. */
export interface RawConnection {
  s: Socket;
  text: () => string;
  closed: () => boolean;
}

/**
 * Opens a raw connection to 127.0.0.1:`port` that records what it reads; `sockets`, when given,
 * collects it for the file's afterEach to destroy.
 */
export async function openRaw(port: number, sockets?: Socket[]): Promise<RawConnection> {
  const s = connect(port, '127.0.0.1');
  sockets?.push(s);
  let out = '';
  let closed = false;
  s.setEncoding('latin1');
  s.on('data', (c: string) => {
    out += c;
  });
  s.on('error', () => {});
  s.on('close', () => {
    closed = true;
  });
  await new Promise((r) => s.once('connect', r));
  return { s, text: () => out, closed: () => closed };
}
