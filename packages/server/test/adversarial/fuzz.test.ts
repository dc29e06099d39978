// Property: no request, however malformed, crashes the server, leaves an unhandled rejection,
// gets an invalid status or stays pending. Random methods, paths, headers and bodies go through
// app.inject and through a real socket (structured requests, and raw bytes).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { METHODS, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appStats } from '../../src/app';
import { type App, cors, createApp, createEventHub, HttpException } from '../../src/index';
import { start, until } from '../helpers';
import { guardProcess, rawSocket, within } from './harness';

guardProcess();

let dir: string;
let app: App;
let port: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keel-fuzz-'));
  mkdirSync(join(dir, 'sub'));
  writeFileSync(join(dir, 'a.txt'), 'abcdefghijklmnopqrstuvwxyz'.repeat(100));
  writeFileSync(join(dir, '.env'), 'SECRET');
  writeFileSync(join(dir, 'sub', 'b.json'), '{"b":1}');
  app = createApp({
    compression: { threshold: 64 },
    parsers: { text: ['text/*'] },
    bodyLimit: 64 * 1024,
    trustProxy: 'loopback',
    development: false,
  });
  app.onError(() => {});
  app.use(cors({ origin: ['https://a.example'], credentials: true }));
  app.use(async (ctx, next) => {
    if (ctx.header('x-fail') === 'middleware') throw new Error('middleware failed');
    await next();
  });
  const hub = createEventHub();
  app.get('/json/:id', (ctx) =>
    ctx.json({ id: ctx.params.id, q: ctx.query('q') ?? null, ip: ctx.ip }),
  );
  app.all('/echo', (ctx) =>
    ctx.json({ body: Buffer.isBuffer(ctx.body) ? ctx.body.length : (ctx.body ?? null) }),
  );
  app.post('/validate', (ctx) =>
    ctx.json(
      ctx.validate({
        age: { type: 'integer', min: 0 },
        email: { type: 'email' },
        name: { max: 20, pattern: /^[a-z]+$/ },
      }),
    ),
  );
  app.all('/graphql', (ctx) =>
    ctx.graphql('type Query { hello(name: String): String!, list: [Int!]! }', {
      Query: { hello: (_: unknown, a: { name?: string }) => `hi ${a.name}`, list: () => [1, 2] },
    }),
  );
  app.get('/files/*', (ctx) => ctx.sendFile(ctx.params['*'] ?? '', { root: dir }));
  app.get('/events', (ctx) => hub.connect(ctx));
  app.get('/throw/:status', (ctx) => {
    const status = Number(ctx.params.status);
    if (Number.isInteger(status) && status >= 400 && status <= 599) throw new HttpException(status);
    throw new Error('not an HttpException');
  });
  app.get('/redirect', (ctx) => ctx.redirect(ctx.query('to') ?? '/'));
  ({ port } = await start(app));
});

afterAll(async () => {
  await app.close({ timeoutMs: 1000 });
  rmSync(dir, { recursive: true, force: true });
});

const token = fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,12}$/);
const printable = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 60,
});
const segment = fc.oneof(
  fc.constantFrom(
    'json',
    'echo',
    'validate',
    'graphql',
    'files',
    'events',
    'throw',
    'redirect',
    'a.txt',
    'sub',
    'b.json',
    '.env',
    '..',
    '.',
    '%2e%2e',
    '%00',
    '%zz',
    '%E0%A4%A',
    '418',
    '599',
    'x'.repeat(150),
  ),
  fc.stringMatching(/^[A-Za-z0-9._~%-]{0,20}$/),
);
const path = fc
  .tuple(
    fc.array(segment, { minLength: 0, maxLength: 5 }),
    fc.option(printable.map(encodeURI), { nil: undefined }),
  )
  .map(([segments, query]) => `/${segments.join('/')}${query === undefined ? '' : `?${query}`}`);
const headerValue = fc.oneof(
  printable,
  fc.constantFrom(
    'application/json',
    'application/x-www-form-urlencoded',
    'text/plain',
    'multipart/form-data; boundary=x',
    'gzip, br',
    'br;q=0, gzip;q=0.5',
    'bytes=0-10',
    'bytes=-5, 3-1, 0-',
    'W/"x"',
    'https://a.example',
    '127.0.0.1, garbage, [::1]:80',
    '100-continue',
    'middleware',
  ),
);
const headers = fc.dictionary(
  fc.constantFrom(
    'content-type',
    'accept-encoding',
    'range',
    'if-range',
    'if-none-match',
    'origin',
    'x-forwarded-for',
    'x-forwarded-proto',
    'x-forwarded-host',
    'last-event-id',
    'x-request-id',
    'cookie',
    'x-fail',
    'access-control-request-method',
    'cache-control',
  ),
  headerValue,
  { maxKeys: 6 },
);
const body = fc.oneof(
  fc.constant(undefined),
  printable,
  fc.json({ maxDepth: 4 }),
  fc.constantFrom(
    '{"__proto__":{"x":1}}',
    '{"query":"{ hello(name: \\"x\\") list }"}',
    `{"age":"${'9'.repeat(500)}x"}`,
    '{"a":',
  ),
  fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
);
const method = fc.oneof(
  fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'),
  token.map((t) => t.toUpperCase()),
);
const requestArb = fc.record({ method, path, headers, body });
// light-my-request accepts only the methods Node knows (http.METHODS); a socket takes any token.
const injectArb = fc.record({ method: fc.constantFrom(...METHODS), path, headers, body });

// Deterministic by default; FUZZ_SEED=<n> (or FUZZ_SEED=random) explores other inputs.
const seed = process.env.FUZZ_SEED;
const runs = (numRuns: number) => ({
  numRuns,
  ...(seed === 'random' ? {} : { seed: Number(seed ?? 20261126) }),
});

const isStatus = (status: number): boolean =>
  Number.isInteger(status) && status >= 100 && status <= 599;

describe('fuzz: any request gets a valid answer and nothing crashes', () => {
  it('through app.inject', async () => {
    await fc.assert(
      fc.asyncProperty(injectArb, async (r) => {
        // An event stream stays open by design, and inject waits for the end of a response.
        if (r.path.includes('events') && r.method !== 'HEAD') return;
        const res = await within(
          app.inject({ method: r.method, url: r.path, headers: r.headers, body: r.body }),
          4000,
          `${r.method} ${r.path}`,
        );
        expect(isStatus(res.status)).toBe(true);
      }),
      runs(400),
    );
    await until(() => appStats(app).inflight === 0);
  }, 60_000);

  it('through a real socket', async () => {
    await fc.assert(
      fc.asyncProperty(requestArb, async (r) => {
        const status = await within(
          new Promise<number>((resolve, reject) => {
            const req = request(
              {
                host: '127.0.0.1',
                port,
                method: r.method,
                path: r.path,
                headers: r.headers,
                agent: false,
              },
              (res) => {
                if (String(res.headers['content-type']).startsWith('text/event-stream')) {
                  req.destroy(); // a stream: the headers are the answer
                  resolve(res.statusCode ?? 0);
                  return;
                }
                res.resume();
                res.on('end', () => resolve(res.statusCode ?? 0));
                res.on('error', reject);
              },
            );
            req.on('error', reject);
            if (r.body !== undefined && r.method !== 'GET' && r.method !== 'HEAD') {
              req.end(
                typeof r.body === 'string' || Buffer.isBuffer(r.body)
                  ? r.body
                  : JSON.stringify(r.body),
              );
            } else req.end();
          }),
          4000,
          `${r.method} ${r.path}`,
        );
        expect(isStatus(status)).toBe(true);
      }),
      runs(150),
    );
    await until(() => appStats(app).inflight === 0);
  }, 60_000);

  it('raw bytes: a response or a closed connection, and the server still answers', async () => {
    const bytes = fc.oneof(
      fc.uint8Array({ minLength: 1, maxLength: 300 }).map((b) => Buffer.from(b)),
      fc
        .tuple(method, path, fc.array(fc.tuple(token, printable), { maxLength: 5 }), printable)
        .map(([m, p, hs, b]) =>
          Buffer.from(
            `${m} ${p} HTTP/1.1\r\nHost: x\r\n${hs.map(([k, v]) => `${k}: ${v}\r\n`).join('')}Content-Length: ${b.length}\r\n\r\n${b}`,
          ),
        ),
    );
    await fc.assert(
      fc.asyncProperty(bytes, async (data) => {
        const socket = await rawSocket(port);
        socket.send(data);
        socket.send('\r\n\r\n');
        // Either the server answers or it closes; never silence.
        await within(
          until(() => socket.closed || /^HTTP\/1\.1 \d{3} /.test(socket.received), 2000),
          4000,
          'an answer',
        );
        if (socket.received !== '') expect(socket.received).toMatch(/^HTTP\/1\.1 [1-5]\d\d /);
        socket.end();
      }),
      runs(100),
    );
    const next = await rawSocket(port);
    next.send('GET /json/1 HTTP/1.1\r\nHost: x\r\n\r\n');
    await next.until('"id":"1"');
    next.end();
  }, 60_000);
});
