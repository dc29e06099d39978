// Black-box helpers: a real loopback socket and a manual clock, nothing from src but the public
// index. Written from the ctx spec (seeds/001) and issues #10, #13, #14.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import type { App, Clock, TimerHandle } from '../../src/index';
import { eventWaiters, where } from '../sse-wait';

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text: string;
  json(): unknown;
}

const opened: App[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((a) => a.close({ timeoutMs: 1000 })));
});

/** Listens on 127.0.0.1, port 0; closed after the test. */
export async function serve(app: App): Promise<number> {
  const server = await app.listen(0, '127.0.0.1');
  opened.push(app);
  return (server.address() as AddressInfo).port;
}

export interface Req {
  method?: string;
  path?: string;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
}

/** One request on its own connection (no agent), the whole body read. */
export function call(port: number, req: Req = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const r = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: req.method ?? 'GET',
        path: req.path ?? '/',
        headers: req.headers,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          const text = body.toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body,
            text,
            json: () => JSON.parse(text),
          });
        });
      },
    );
    r.on('error', reject);
    if (req.body !== undefined) r.write(req.body);
    r.end();
  });
}

export const postJson = (port: number, path: string, value: unknown, headers = {}) =>
  call(port, {
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(value),
  });

export interface SseEvent {
  event: string;
  data: string;
  id: string | undefined;
}

export interface SseClient {
  status: number;
  headers: IncomingHttpHeaders;
  events: SseEvent[];
  /**
   * Resolves once at least `n` events arrived; rejects after `ms` (10 s unless given) naming the
   * events received so far.
   */
  waitFor(n: number, ms?: number): Promise<SseEvent[]>;
  /** Resolves when the server ended the stream. */
  ended: Promise<void>;
  close(): void;
}

/** Opens an event stream and parses the frames as a browser would (event, data, id). */
export function openSse(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const r = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        headers: { accept: 'text/event-stream', ...headers },
        agent: false,
      },
      (res) => {
        const events: SseEvent[] = [];
        const waiters = eventWaiters(events, where(port, path, headers));
        let buf = '';
        let endResolve!: () => void;
        const ended = new Promise<void>((r2) => {
          endResolve = () => {
            waiters.end();
            r2();
          };
        });
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buf += chunk;
          let cut = buf.indexOf('\n\n');
          while (cut !== -1) {
            const frame = buf.slice(0, cut);
            buf = buf.slice(cut + 2);
            let event = 'message';
            let id: string | undefined;
            const data: string[] = [];
            let any = false;
            for (const line of frame.split('\n')) {
              if (line.startsWith(':')) continue;
              const colon = line.indexOf(':');
              const field = colon === -1 ? line : line.slice(0, colon);
              let value = colon === -1 ? '' : line.slice(colon + 1);
              if (value.startsWith(' ')) value = value.slice(1);
              if (field === 'event') event = value;
              else if (field === 'data') {
                data.push(value);
                any = true;
              } else if (field === 'id') id = value;
            }
            if (any) events.push({ event, data: data.join('\n'), id });
            cut = buf.indexOf('\n\n');
          }
          waiters.notify();
        });
        res.on('end', endResolve);
        res.on('close', endResolve);
        res.on('error', () => endResolve());
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          events,
          ended,
          waitFor: (n, ms) => waiters.waitFor(n, ms).then(() => events),
          close: () => r.destroy(),
        });
      },
    );
    r.on('error', reject);
    r.end();
  });
}

/** A manual clock in the shape the app takes (`{ now, setTimeout, clearTimeout }`). */
export class ManualClock implements Clock {
  #now = 0;
  #seq = 0;
  #timers = new Map<number, { at: number; fn: () => void }>();
  now(): number {
    return this.#now;
  }
  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = ++this.#seq;
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), fn });
    return id as unknown as TimerHandle;
  }
  clearTimeout(handle: TimerHandle): void {
    this.#timers.delete(handle as unknown as number);
  }
  get pending(): number {
    return this.#timers.size;
  }
  /** Moves time on by `ms`, firing due timers in order. */
  advance(ms: number): void {
    const until = this.#now + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const t of this.#timers)
        if (t[1].at <= until && (!next || t[1].at < next[1].at)) next = t;
      if (!next) break;
      this.#timers.delete(next[0]);
      this.#now = next[1].at;
      next[1].fn();
    }
    this.#now = until;
  }
}

/** Lets sockets and timers settle: a few macrotasks. */
export async function ticks(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}
