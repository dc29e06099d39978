// Chaos monkey over a real loopback socket: batches of seeded random raw-HTTP clients (valid and
// malformed requests, pipelined bursts, bodies in random slices with pauses, clients that stop
// reading, half-close or reset at a random byte, Expect: 100-continue with and without the body,
// keep-alive reuse after errors) against an app with a representative route set; `app.close()`
// lands at a random moment of the last batch. After each batch, with every client gone:
//   - no uncaught exception or unhandled rejection (guardProcess),
//   - every request a chain started got exactly one onResponse, and what it says matches what
//     the client read off the wire (status; finished for a body read whole, also the last
//     response of a client that closed as soon as it read it, or of one that sent garbage after
//     it, which Node cuts on the parse error in the same tick),
//   - no handler is still running (ctx.signal told the ones whose client left),
//   - every pooled slot is back, no app timer armed, no file descriptor or Node timer left,
//     heap bounded, and a fresh well-formed request is answered.
// The random choices of each client come from its own PRNG (seed, batch, client), so a seed
// replays the same requests and the same cuts (the interleaving with the server is real I/O):
// CHAOS_SEED=<n> (in the test's name) explores others, CHAOS_ONLY=<batch>[.<client>] shrinks one.
// The app's timers run on a ManualClock the batch ticks (heartbeats, sseInterval, slow handlers,
// sendTimeout, close()'s deadline), so `clock.active` tells a leaked one.
import { mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import { prng } from '../../../core/test/helpers';
import { appStats } from '../../src/app';
import { type App, type Context, createApp, HttpException } from '../../src/index';
import { ManualClock, raw, settle, until } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

const SEED = Number(process.env.CHAOS_SEED ?? 2026112801);
const BATCHES = Number(process.env.CHAOS_BATCHES ?? 12);
const CLIENTS = Number(process.env.CHAOS_CLIENTS ?? 36);
/** `<batch>.<client>` or `<batch>`: runs only that client, or that batch (to shrink a failure). */
const ONLY = process.env.CHAOS_ONLY;

interface Rand {
  (): number;
  int(lo: number, hi: number): number;
  pick<T>(items: readonly T[]): T;
  chance(p: number): boolean;
}

function rand(seed: number): Rand {
  const next = prng(seed);
  const r = (() => next()) as Rand;
  r.int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1));
  r.pick = (items) => items[Math.floor(next() * items.length)]!;
  r.chance = (p) => next() < p;
  return r;
}

const openFds = (): number => readdirSync('/proc/self/fd').length;
/** What each open descriptor is (for a leak's message). */
const fdTargets = (): string[] =>
  readdirSync('/proc/self/fd').map((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      return '?';
    }
  });
const nodeTimers = (): number =>
  process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ── The app ──────────────────────────────────────────────────────────────────────────────────

const FILE_BYTES = 300_000;
const SEND_TIMEOUT = 2_000;

interface Report {
  status: number;
  finished: boolean;
  path: string;
}

function buildApp(dir: string, clock: ManualClock) {
  const app = createApp({
    clock,
    bodyLimit: 64 * 1024,
    parsers: { text: ['text/*'] },
    sendTimeout: SEND_TIMEOUT,
    // Large JSON answers are compressed off the loop: an async step a client can leave during.
    compression: { threshold: 2048 },
    sse: { heartbeatMs: 200 },
    development: false,
  });
  const started = new Map<string, number>();
  const reports = new Map<string, Report[]>();
  const running = new Map<string, Context>();
  const errors: unknown[] = [];
  /** What the run covered: chains started per path, onResponse per status and finished. */
  const coverage = new Map<string, number>();
  const count = (key: string): void => {
    coverage.set(key, (coverage.get(key) ?? 0) + 1);
  };
  /** Highest pooled + inflight seen: the slots made so far (none is ever dropped below 1024). */
  let slotsSeen = 0;
  app.use(async (ctx, next) => {
    const stats = appStats(app);
    slotsSeen = Math.max(slotsSeen, stats.pooled + stats.inflight);
    started.set(ctx.requestId, (started.get(ctx.requestId) ?? 0) + 1);
    count(`${ctx.method} ${ctx.path.split('/')[1]}`);
    running.set(ctx.requestId, ctx);
    try {
      return await next();
    } finally {
      running.delete(ctx.requestId);
    }
  });
  app.onResponse((ctx, info) => {
    const list = reports.get(ctx.requestId) ?? [];
    list.push({ status: info.status, finished: info.finished, path: ctx.path });
    count(`status ${info.status}${info.finished ? '' : ' unfinished'}`);
    reports.set(ctx.requestId, list);
  });
  app.onError((err) => {
    errors.push(err);
  });

  const sleep = (ctx: Context, ms: number): Promise<boolean> =>
    new Promise((resolve) => {
      const signal = ctx.signal;
      if (signal.aborted) return resolve(false);
      const timer = clock.setTimeout(() => {
        signal.removeEventListener('abort', aborted);
        resolve(true);
      }, ms);
      const aborted = (): void => {
        clock.clearTimeout(timer);
        resolve(false);
      };
      signal.addEventListener('abort', aborted, { once: true });
    });

  app.get('/json/:id', (ctx) => ctx.json({ id: ctx.params.id, q: ctx.query('q') ?? null }));
  app.get('/users/:uid/posts/:pid', (ctx) => ctx.json(ctx.params));
  app.post('/echo', (ctx) =>
    ctx.json({
      type: typeof ctx.body,
      size: JSON.stringify(ctx.body ?? null).length,
      body: ctx.body,
    }),
  );
  app.post('/validate', (ctx) =>
    ctx.json(ctx.validate({ name: { max: 20, pattern: /^[a-z]+$/ }, age: { type: 'integer' } })),
  );
  app.get('/sse', (ctx) => {
    let n = 0;
    return ctx.sseInterval(() => ({ n: ++n }), 50);
  });
  app.get('/file', (ctx) => ctx.sendFile('data.bin', { root: dir }));
  app.all('/graphql', (ctx) =>
    ctx.graphql('type Query { hello(name: String): String!, slow: Int! }', {
      Query: {
        hello: (_: unknown, a: { name?: string }) => `hi ${a.name ?? ''}`,
        slow: async () => ((await sleep(ctx, 40)) ? 1 : 0),
      },
    }),
  );
  app.get('/cookies', (ctx) => {
    const seen = Number(ctx.cookie('seen') ?? 0) || 0;
    ctx.setCookie('seen', String(seen + 1), { httpOnly: true, path: '/' });
    ctx.json({ seen });
  });
  app.get('/throw-sync', () => {
    throw new Error('chaos: sync throw');
  });
  app.get('/throw-async', async (ctx) => {
    await sleep(ctx, 10);
    throw new Error('chaos: async throw');
  });
  app.get('/teapot', () => {
    throw new HttpException(418);
  });
  app.get('/slow', async (ctx) => {
    const ms = Number(ctx.query('ms') ?? 100);
    if (await sleep(ctx, ms)) ctx.json({ slept: ms });
  });
  app.get('/big', (ctx) => {
    const total = Number(ctx.query('kb') ?? 1024) * 1024;
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let sent = 0;
    const source = new Readable({
      read() {
        if (sent >= total) this.push(null);
        else {
          sent += chunk.length;
          this.push(chunk);
        }
      },
    });
    return ctx.setHeader('content-type', 'text/plain').send(source);
  });
  app.post('/upload', { bodyLimit: 256 * 1024, parsers: { raw: ['*/*'] } }, (ctx) =>
    ctx.json({ bytes: Buffer.isBuffer(ctx.body) ? ctx.body.length : -1 }),
  );
  return {
    app,
    started,
    reports,
    running,
    errors,
    coverage,
    get slotsSeen() {
      return slotsSeen;
    },
  };
}

// ── Requests ─────────────────────────────────────────────────────────────────────────────────

interface Outgoing {
  /** The x-request-id sent, or null for bytes that are no request. */
  id: string | null;
  method: string;
  head: string;
  body: Buffer;
  /** How the body goes with `Expect: 100-continue`: after the 100, never, or at once. */
  expect: 'wait' | 'never' | 'eager' | null;
  /** An event stream: the client reads a little of it, then leaves. */
  stream: boolean;
}

function chunked(body: Buffer, r: Rand): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  while (at < body.length) {
    const n = Math.min(body.length - at, r.int(1, 200));
    parts.push(
      Buffer.from(`${n.toString(16)}\r\n`),
      body.subarray(at, at + n),
      Buffer.from('\r\n'),
    );
    at += n;
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

function valid(r: Rand, id: string, allowStream: boolean): Outgoing {
  const headers: string[] = ['Host: chaos', `X-Request-Id: ${id}`];
  if (r.chance(0.1)) headers.push('Connection: close');
  if (r.chance(0.3))
    headers.push(`Accept-Encoding: ${r.pick(['gzip', 'br', 'gzip, br', 'identity'])}`);
  let method = 'GET';
  let path: string;
  let body: Buffer = Buffer.alloc(0);
  let type: string | null = null;
  let stream = false;
  const kind = r.pick([
    'json',
    'params',
    'echo-json',
    'echo-form',
    'echo-text',
    'echo-bad',
    'validate',
    'sse',
    'sse',
    'file',
    'big',
    'graphql',
    'graphql-get',
    'cookies',
    'throw-sync',
    'throw-async',
    'teapot',
    'slow',
    'big',
    'upload',
    'too-large',
    'missing',
    'head',
    'options',
  ]);
  switch (kind) {
    case 'json':
      path = `/json/${r.int(1, 999)}?q=${r.pick(['a', '%20b', '%zz', ''])}`;
      break;
    case 'params':
      path = `/users/${r.int(1, 99)}/posts/${r.pick(['x', '%E2%9C%93', '1'])}`;
      break;
    case 'echo-json':
      method = 'POST';
      path = '/echo';
      type = 'application/json';
      body = Buffer.from(JSON.stringify({ a: 'x'.repeat(r.int(0, 3000)), n: [1, 2, { b: null }] }));
      break;
    case 'echo-form':
      method = 'POST';
      path = '/echo';
      type = 'application/x-www-form-urlencoded';
      body = Buffer.from(`a=1&b=${'y'.repeat(r.int(0, 500))}&c=%20`);
      break;
    case 'echo-text':
      method = 'POST';
      path = '/echo';
      type = 'text/plain; charset=utf-8';
      body = Buffer.from('héllo '.repeat(r.int(0, 300)));
      break;
    case 'echo-bad':
      method = 'POST';
      path = '/echo';
      type = 'application/json';
      body = Buffer.from(r.pick(['{"a":', '[1,2', '{"__proto__":{"x":1}}', 'nul']));
      break;
    case 'validate':
      method = 'POST';
      path = '/validate';
      type = 'application/json';
      body = Buffer.from(
        JSON.stringify(
          r.chance(0.5) ? { name: 'abc', age: 3 } : { name: 'ABC!', age: r.pick(['x', 1.5]) },
        ),
      );
      break;
    case 'sse':
      if (!allowStream) return valid(r, id, false);
      path = '/sse';
      stream = true;
      headers.push('Accept: text/event-stream');
      break;
    case 'file': {
      path = '/file';
      const range = r.pick([
        null,
        `bytes=0-${r.int(0, 999)}`,
        `bytes=${r.int(0, FILE_BYTES)}-`,
        `bytes=-${r.int(1, 5000)}`,
        'bytes=5-1',
        `bytes=${FILE_BYTES + 10}-`,
        'bytes=0-1,5-9',
        'lines=1-2',
      ]);
      if (range !== null) headers.push(`Range: ${range}`);
      if (r.chance(0.2)) headers.push('If-Range: "nope"');
      break;
    }
    case 'graphql':
      method = 'POST';
      path = '/graphql';
      type = 'application/json';
      body = Buffer.from(
        JSON.stringify({
          query: r.pick(['{ hello(name: "x") }', '{ slow }', '{ nope }', '{ hello(']),
        }),
      );
      break;
    case 'graphql-get':
      path = `/graphql?query=${encodeURIComponent(r.pick(['{ hello }', '{ slow }', 'mutation { x }']))}`;
      break;
    case 'cookies':
      path = '/cookies';
      headers.push(
        `Cookie: seen=${r.pick(['1', '%zz', '"x"', ''])}; other=${'c'.repeat(r.int(0, 50))}`,
      );
      break;
    case 'throw-sync':
    case 'throw-async':
    case 'teapot':
      path = `/${kind}`;
      break;
    case 'slow':
      path = `/slow?ms=${r.int(10, 400)}`;
      break;
    case 'big':
      path = `/big?kb=${r.int(64, 2048)}`;
      break;
    case 'upload':
      method = r.pick(['POST', 'POST', 'PUT']);
      path = '/upload';
      type = 'application/octet-stream';
      body = Buffer.alloc(r.int(0, 100_000), 0x62);
      break;
    case 'too-large':
      method = 'POST';
      path = '/echo';
      type = 'application/json';
      body = Buffer.from(`{"pad":"${'p'.repeat(70 * 1024)}"}`);
      break;
    case 'missing':
      method = r.pick(['GET', 'DELETE', 'POST']);
      path = r.pick(['/nope', '/json', '/%zz', '/users/1/posts']);
      break;
    case 'head':
      method = 'HEAD';
      path = r.pick(['/json/1', '/file', '/big?kb=64', '/sse', '/cookies']);
      break;
    default:
      method = 'OPTIONS';
      path = r.pick(['/json/1', '/echo', '*']);
  }
  if (type !== null) headers.push(`Content-Type: ${type}`);
  let expect: Outgoing['expect'] = null;
  let payload: Buffer = body;
  if (method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS') {
    if (r.chance(0.3)) {
      headers.push('Transfer-Encoding: chunked');
      payload = chunked(body, r);
    } else headers.push(`Content-Length: ${body.length}`);
    if (r.chance(0.25)) {
      headers.push('Expect: 100-continue');
      expect = r.pick(['wait', 'wait', 'never', 'eager'] as const);
    }
  }
  return {
    id,
    method,
    head: `${method} ${path} HTTP/1.1\r\n${headers.join('\r\n')}\r\n\r\n`,
    body: payload,
    expect,
    stream,
  };
}

function malformed(r: Rand, id: string): Outgoing {
  const bytes = r.pick([
    () => Buffer.from(Array.from({ length: r.int(1, 200) }, () => r.int(0, 255))),
    () => 'GET /json/1 HTTP/1.1\r\nHost chaos\r\n\r\n',
    () => 'GET /json/1 HTTP/9.9\r\nHost: chaos\r\n\r\n',
    () => 'GET /json/1\r\n\r\n',
    () =>
      'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!',
    () =>
      'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n',
    () =>
      'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
    () => 'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n',
    () => `GET /json/1 HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(17 * 1024)}\r\n\r\n`,
    () => 'GET /json/1 HTTP/1.1\nHost: x\n\n',
    () => `GET /${'%'.repeat(r.int(1, 3))} HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${id}\r\n\r\n`,
    () => `GET /json/1 HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    () => `CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\n\r\n`,
    () => 'GET /json/\x001 HTTP/1.1\r\nHost: x\r\n\r\n',
  ])();
  return {
    id: null,
    method: 'GET',
    head: typeof bytes === 'string' ? bytes : bytes.toString('latin1'),
    body: Buffer.alloc(0),
    expect: null,
    stream: false,
  };
}

// ── The wire, as a client reads it ───────────────────────────────────────────────────────────

interface Seen {
  id: string | null;
  status: number;
  /** The whole body was read. */
  complete: boolean;
}

/** An incremental HTTP/1.1 response parser over what one socket received (latin1). */
class Wire {
  buffer = '';
  readonly seen: Seen[] = [];
  /** Methods of the requests sent, in order (HEAD responses have no body). */
  readonly methods: string[] = [];
  continues = 0;
  finals = 0;
  #current: Seen | null = null;
  #remaining = -1; // -1 chunked, -2 until close, >= 0 bytes
  #bodyless = false;
  #chunk = -1;

  feed(text: string): void {
    this.buffer += text;
    for (;;) {
      if (this.#current === null) {
        const end = this.buffer.indexOf('\r\n\r\n');
        if (end === -1) return;
        const head = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 4);
        const lines = head.split('\r\n');
        const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0]!)?.[1] ?? 0);
        if (status >= 100 && status < 200) {
          this.continues++;
          continue;
        }
        const headers = new Map<string, string>();
        for (const line of lines.slice(1)) {
          const colon = line.indexOf(':');
          headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
        }
        const method = this.methods[this.finals] ?? 'GET';
        this.finals++;
        this.#current = { id: headers.get('x-request-id') ?? null, status, complete: false };
        this.seen.push(this.#current);
        this.#chunk = -1;
        if (method === 'HEAD' || status === 204 || status === 304) this.#remaining = 0;
        else if (headers.get('transfer-encoding') === 'chunked') this.#remaining = -1;
        else if (headers.has('content-length'))
          this.#remaining = Number(headers.get('content-length'));
        else this.#remaining = -2;
        this.#bodyless = this.#remaining === 0;
      }
      if (!this.#body()) return;
    }
  }

  /** Consumes body bytes; true once the current response is complete. */
  #body(): boolean {
    const current = this.#current!;
    if (this.#bodyless || this.#remaining === 0) {
      current.complete = true;
      this.#current = null;
      return true;
    }
    if (this.#remaining > 0) {
      const take = Math.min(this.#remaining, this.buffer.length);
      this.#remaining -= take;
      this.buffer = this.buffer.slice(take);
      if (this.#remaining > 0) return false;
      current.complete = true;
      this.#current = null;
      return true;
    }
    if (this.#remaining === -2) {
      this.buffer = '';
      return false;
    }
    for (;;) {
      if (this.#chunk > 0) {
        const take = Math.min(this.#chunk, this.buffer.length);
        this.#chunk -= take;
        this.buffer = this.buffer.slice(take);
        if (this.#chunk > 0) return false;
      }
      if (this.#chunk === 0) {
        if (this.buffer.length < 2) return false;
        this.buffer = this.buffer.slice(2);
        this.#chunk = -1;
      }
      const eol = this.buffer.indexOf('\r\n');
      if (eol === -1) return false;
      const size = Number.parseInt(this.buffer.slice(0, eol), 16);
      if (size === 0) {
        const end = this.buffer.indexOf('\r\n\r\n');
        if (end === -1) return false;
        this.buffer = this.buffer.slice(end + 4);
        current.complete = true;
        this.#current = null;
        return true;
      }
      this.buffer = this.buffer.slice(eol + 2);
      this.#chunk = size;
    }
  }

  /** An until-close body ends with the connection. */
  closed(): void {
    if (this.#current !== null && this.#remaining === -2) this.#current.complete = true;
  }
}

// ── Clients ──────────────────────────────────────────────────────────────────────────────────

interface Client {
  socket: Socket;
  wire: Wire;
  /** Its local port, once connected (to find its server side). */
  port: number;
  /** What the client did, for a failure's message. */
  plan: string[];
  done: Promise<void>;
}

/** Resolves when `check` holds, the socket closed, or `ms` passed (whichever comes first). */
function waitFor(socket: Socket, check: () => boolean, ms: number): Promise<void> {
  return new Promise((resolve) => {
    if (check() || socket.destroyed) return resolve();
    const timer = setTimeout(finish, ms);
    function finish(): void {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', finish);
      resolve();
    }
    function onData(): void {
      // After the Wire's own data listener (added first), so the check sees this chunk.
      if (check()) finish();
    }
    socket.on('data', onData);
    socket.on('close', finish);
  });
}

async function writeSliced(socket: Socket, bytes: Buffer, r: Rand, sliced: boolean): Promise<void> {
  if (!sliced) {
    if (!socket.destroyed) socket.write(bytes);
    return;
  }
  let at = 0;
  while (at < bytes.length && !socket.destroyed) {
    const n = Math.min(bytes.length - at, r.int(1, r.pick([8, 300, 20_000])));
    socket.write(bytes.subarray(at, at + n));
    at += n;
    if (r.chance(0.3)) await pause(r.int(0, 4));
  }
}

function runClient(port: number, r: Rand, batch: number, index: number): Client {
  const socket = connect(port, '127.0.0.1');
  const wire = new Wire();
  socket.setEncoding('latin1');
  socket.on('data', (text: string) => wire.feed(text));
  socket.on('error', () => {});
  socket.on('close', () => wire.closed());
  const plan: string[] = [];
  let n = 0;
  const nextId = (): string => `c${batch}.${index}.${n++}`;

  const script = async (): Promise<void> => {
    await new Promise<void>((resolve) => {
      socket.once('connect', resolve);
      socket.once('close', resolve);
    });
    if (socket.destroyed) return;
    client.port = socket.localPort ?? 0;
    const count = r.int(1, 4);
    const requests: Outgoing[] = [];
    for (let i = 0; i < count; i++) {
      const bad = r.chance(0.12);
      const req = bad ? malformed(r, nextId()) : valid(r, nextId(), i === count - 1);
      requests.push(req);
      if (req.expect !== null || req.stream || bad) break; // nothing pipelined after those
    }
    const sliced = r.chance(0.5);
    // Where the client leaves: mid-request, mid-response, or not at all.
    const fate = r.pick(['stay', 'stay', 'stay', 'cut-request', 'cut-response', 'stop-reading']);
    const how = r.pick(['destroy', 'destroy', 'end', 'hang'] as const);
    const total = requests.reduce((s, q) => s + q.head.length + q.body.length, 0);
    const cutAt = fate === 'cut-request' ? r.int(0, total - 1) : -1;
    const cutResponseAt = fate === 'cut-response' ? r.int(1, 300_000) : -1;
    let received = 0;
    if (cutResponseAt > 0) {
      socket.on('data', (text: string) => {
        received += text.length;
        if (received >= cutResponseAt) socket.destroy();
      });
    }
    if (fate === 'stop-reading') {
      const after = r.int(0, 100_000);
      socket.on('data', (text: string) => {
        received += text.length;
        if (received >= after) socket.pause();
      });
    }
    const halfCloseAfter = r.chance(0.1);
    if (ONLY?.includes('.')) {
      for (const q of requests) console.log(JSON.stringify(q.head), q.body.length, q.expect);
    }
    plan.push(
      `${requests.map((q) => q.head.split('\r\n')[0]).join(' | ')}; sliced ${sliced}, ${fate} ` +
        `(${how}, request ${cutAt}, response ${cutResponseAt}), half-close ${halfCloseAfter}`,
    );

    const bytes = Buffer.concat(
      requests.flatMap((q) =>
        q.expect === null
          ? [Buffer.from(q.head, 'latin1'), q.body]
          : [Buffer.from(q.head, 'latin1')],
      ),
    );
    for (const q of requests) wire.methods.push(q.method);
    if (cutAt >= 0) {
      await writeSliced(socket, bytes.subarray(0, Math.min(cutAt, bytes.length)), r, sliced);
      if (how === 'destroy') socket.destroy();
      else if (how === 'end') socket.end();
      return; // 'hang': left for the batch's end
    }
    await writeSliced(socket, bytes, r, sliced);
    const last = requests[requests.length - 1]!;
    if (last.expect !== null) {
      if (last.expect === 'wait') {
        await waitFor(socket, () => wire.continues > 0 || wire.finals > 0, 300);
        if (wire.finals === 0) await writeSliced(socket, last.body, r, sliced);
      } else if (last.expect === 'eager') await writeSliced(socket, last.body, r, sliced);
      else if (r.chance(0.5)) socket.end(); // 'never': gives up on the body
    }
    if (halfCloseAfter && !socket.destroyed) socket.end();
    if (last.stream) {
      await waitFor(socket, () => wire.buffer.split('\n\n').length > r.int(1, 4), 400);
      socket.destroy();
      return;
    }
    await waitFor(
      socket,
      () => wire.seen.filter((s) => s.complete).length >= requests.length,
      1000,
    );
    // Keep-alive reuse, also after an error answer.
    if (
      !socket.destroyed &&
      !socket.isPaused() &&
      socket.writable &&
      wire.seen.length === requests.length &&
      r.chance(0.5)
    ) {
      const again = valid(r, nextId(), false);
      wire.methods.push(again.method);
      socket.write(again.head);
      if (again.expect === null) socket.write(again.body);
      else {
        await waitFor(socket, () => wire.continues > 0 || wire.finals > requests.length, 300);
        if (wire.finals === requests.length && !socket.destroyed) socket.write(again.body);
      }
      await waitFor(
        socket,
        () => wire.seen.filter((s) => s.complete).length > requests.length,
        1000,
      );
    }
    if (how === 'destroy') socket.destroy();
    else if (how === 'end' && !socket.destroyed) socket.end();
  };
  const client: Client = {
    socket,
    wire,
    plan,
    port: 0,
    done: Promise.resolve(),
  };
  client.done = script();
  return client;
}

// ── The run ──────────────────────────────────────────────────────────────────────────────────

describe(`chaos monkey (CHAOS_SEED=${SEED})`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-chaos-'));
  writeFileSync(join(dir, 'data.bin'), Buffer.alloc(FILE_BYTES, 0x63));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('survives random clients, keeps its books, leaks nothing', async () => {
    console.log(`chaos monkey seed: ${SEED} (CHAOS_SEED=${SEED} replays it)`);
    const fdsBefore = openFds();
    const timersBefore = nodeTimers();
    const clock = new ManualClock();
    const t = buildApp(dir, clock);
    const app: App = t.app;
    const server = await app.listen(0, '127.0.0.1');
    const port = (server.address() as { port: number }).port;
    const fdsListening = openFds();
    const fdsListeningTargets = fdTargets();
    const serverSockets = new Set<Socket>();
    server.on('connection', (socket: Socket) => {
      serverSockets.add(socket);
      socket.once('close', () => serverSockets.delete(socket));
    });
    const plans = new Map<number, string>();
    const timersListening = nodeTimers();
    gc();
    const heapStart = process.memoryUsage().heapUsed;
    const closeBatch = BATCHES - 1;
    const closeRand = rand(SEED ^ 0xc105e);
    let closing: Promise<void> | null = null;
    let handlerErrors = 0;
    let continues = 0;
    let responsesRead = 0;
    const where = (batch: number): string => `seed ${SEED}, batch ${batch}`;

    for (let batch = 0; batch < BATCHES; batch++) {
      const clients: Client[] = [];
      // The manual clock moves while the batch runs: intervals, heartbeats, slow handlers,
      // sendTimeout (a client that stopped reading is cut), close()'s deadline.
      let ticking = true;
      const ticker = (async () => {
        while (ticking) {
          await pause(5);
          clock.tick(20);
        }
      })();
      const closeAfter = batch === closeBatch ? closeRand.int(0, CLIENTS - 1) : -1;
      for (let i = 0; i < CLIENTS; i++) {
        if (i === closeAfter) closing = app.close({ timeoutMs: 1_000 });
        if (ONLY !== undefined && ONLY !== `${batch}.${i}` && ONLY !== `${batch}`) continue;
        const r = rand((SEED * 31 + batch * 1_000 + i) | 0);
        if (r.chance(0.3)) await pause(r.int(0, 3));
        clients.push(runClient(port, r, batch, i));
      }
      await Promise.all(clients.map((c) => c.done));
      for (const c of clients) plans.set(c.port, c.plan.join('; '));
      await pause(20);
      for (const c of clients) c.socket.destroy();
      ticking = false;
      await ticker;

      // Every client is gone: no handler may still run (ctx.signal told them), and every slot
      // comes back without the clock moving.
      await until(() => t.running.size === 0 && appStats(app).inflight === 0, 1500).catch(() => {
        const left = [...t.running.values()].map(
          (ctx) => `${ctx.method} ${ctx.path} ${ctx.requestId} aborted=${ctx.signal.aborted}`,
        );
        throw new Error(
          `${where(batch)}: still running ${JSON.stringify(left)}, inflight ${appStats(app).inflight}`,
        );
      });
      await settle();

      for (const [id, n] of t.started) {
        const got = t.reports.get(id)?.length ?? 0;
        if (got !== 1 || n !== 1) {
          throw new Error(`${where(batch)}: ${id} started ${n}x, onResponse ${got}x`);
        }
      }
      for (const [id, list] of t.reports) {
        if (list.length !== 1) throw new Error(`${where(batch)}: ${id} onResponse ${list.length}x`);
      }
      for (const c of clients) {
        for (const s of c.wire.seen) {
          if (s.id === null || !s.id.startsWith(`c${batch}.`)) continue;
          const report = t.reports.get(s.id)?.[0];
          if (report === undefined) {
            throw new Error(`${where(batch)}: ${s.id} got ${s.status} but no onResponse`);
          }
          if (report.status !== s.status || (s.complete && !report.finished)) {
            throw new Error(
              `${where(batch)}: ${s.id} ${report.path}: the client read ${s.status}` +
                `${s.complete ? ' (whole)' : ''}, onResponse said ${JSON.stringify(report)}; ` +
                c.plan.join('; '),
            );
          }
        }
      }
      const unexpected = t.errors.filter(
        (err) => !(err instanceof Error && err.message.startsWith('chaos: ')),
      );
      if (unexpected.length > 0) {
        throw new Error(`${where(batch)}: onError got ${String(unexpected[0])}`, {
          cause: unexpected[0],
        });
      }
      handlerErrors += t.errors.length;
      t.errors.length = 0;
      for (const c of clients) {
        continues += c.wire.continues;
        responsesRead += c.wire.seen.length;
      }
      const stats = appStats(app);
      expect(stats.inflight, where(batch)).toBe(0);
      expect(stats.pooled, where(batch)).toBeGreaterThanOrEqual(t.slotsSeen);
      expect(clock.active, `${where(batch)}: app timers armed`).toBe(0);

      if (batch === closeBatch) break;
      const fresh = await raw(port, {
        path: '/json/7?q=ok',
        headers: { 'x-request-id': `fresh${batch}` },
      });
      expect(fresh.status, where(batch)).toBe(200);
      expect(JSON.parse(fresh.body), where(batch)).toEqual({ id: '7', q: 'ok' });
      await until(() => openFds() === fdsListening, 500).catch(() => {
        const before = new Set(fdsListeningTargets);
        const extra = fdTargets().filter((f) => !before.has(f));
        for (const sock of serverSockets) {
          const state = sock as Socket & { _httpMessage?: unknown };
          extra.push(
            `server socket from ${sock.remotePort} (${plans.get(sock.remotePort ?? 0)}): ` +
              `read ${sock.bytesRead}, written ${sock.bytesWritten}, readable ${sock.readable}, ` +
              `writable ${sock.writable}, ended ${sock.writableEnded}, paused ${sock.isPaused()}, ` +
              `message ${state._httpMessage !== null && state._httpMessage !== undefined}`,
          );
        }
        throw new Error(`${where(batch)}: file descriptors left open: ${extra.join(', ')}`);
      });
      await until(() => nodeTimers() <= timersListening, 500).catch(() => {
        throw new Error(`${where(batch)}: ${nodeTimers() - timersListening} Node timers left`);
      });
      t.started.clear();
      t.reports.clear();
    }

    console.log(
      `seed ${SEED} covered: ${[...t.coverage]
        .sort()
        .map(([k, n]) => `${k}: ${n}`)
        .join(', ')}; ` +
        `handler errors ${handlerErrors}, 100 Continue ${continues}, responses read ${responsesRead}`,
    );
    // close() ran mid-batch; its deadline is on the manual clock.
    for (let i = 0; i < 100 && closing !== null; i++) clock.tick(100);
    await closing;
    expect(server.listening).toBe(false);
    await until(() => openFds() === fdsBefore, 500).catch(() => {
      throw new Error(`seed ${SEED}: ${openFds() - fdsBefore} file descriptors left after close`);
    });
    await until(() => nodeTimers() <= timersBefore, 500).catch(() => {
      throw new Error(`seed ${SEED}: ${nodeTimers() - timersBefore} Node timers left after close`);
    });
    expect(clock.active).toBe(0);
    gc();
    // Bounded: what the batches kept is far below one batch's traffic.
    expect(process.memoryUsage().heapUsed - heapStart).toBeLessThan(64 * 1024 * 1024);
  }, 60_000);
});
