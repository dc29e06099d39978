import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Context } from '../src/index';
import {
  type AppOptions,
  BadRequestError,
  BodyTooLargeError,
  cors,
  createApp,
  createEventHub,
  HttpException,
  memoryStore,
} from '../src/index';
import { validate } from '../src/validate';

const TEMPLATE = /^keel: `[^`]+` must be .+, got .+$/;

/** Every bad option or argument, the error class it must throw and the value it must show. */
const cases: [what: string, call: () => unknown, type: typeof TypeError, shows: string][] = [
  ['bodyLimit', () => createApp({ bodyLimit: -1 }), RangeError, '-1'],
  ['bodyLimit type', () => createApp({ bodyLimit: '1' as never }), TypeError, '"1"'],
  ['poolSize', () => createApp({ poolSize: 1.5 }), RangeError, '1.5'],
  ['sse', () => createApp({ sse: 5 as never }), TypeError, '5'],
  ['sse.heartbeatMs', () => createApp({ sse: { heartbeatMs: -5 } }), RangeError, '-5'],
  ['sse.maxBufferedBytes', () => createApp({ sse: { maxBufferedBytes: 0 } }), RangeError, '0'],
  ['maxParamLength', () => createApp({ maxParamLength: 0 }), RangeError, '0'],
  ['requestTimeout', () => createApp({ requestTimeout: -1 }), RangeError, '-1'],
  ['headersTimeout', () => createApp({ headersTimeout: 2 ** 31 }), RangeError, '2147483648'],
  [
    'headersTimeout > requestTimeout',
    () => createApp({ requestTimeout: 5000, headersTimeout: 6000 }),
    RangeError,
    '6000',
  ],
  ['keepAliveTimeout', () => createApp({ keepAliveTimeout: Number.NaN }), RangeError, 'NaN'],
  ['sendTimeout', () => createApp({ sendTimeout: -1 }), RangeError, '-1'],
  ['sendTimeout type', () => createApp({ sendTimeout: '5' as never }), TypeError, '"5"'],
  [
    'requestIdHeader',
    () => createApp({ requestIdHeader: 'bad header' }),
    RangeError,
    '"bad header"',
  ],
  ['requestIdHeader type', () => createApp({ requestIdHeader: true as never }), TypeError, 'true'],
  ['development', () => createApp({ development: 'yes' as never }), TypeError, '"yes"'],
  ['ignoreTrailingSlash', () => createApp({ ignoreTrailingSlash: 1 as never }), TypeError, '1'],
  ['caseSensitive', () => createApp({ caseSensitive: null as never }), TypeError, 'null'],
  ['clock', () => createApp({ clock: 1 as never }), TypeError, '1'],
  [
    'clock.setTimeout',
    () => createApp({ clock: { now: Date.now } as never }),
    TypeError,
    'undefined',
  ],
  ['options', () => createApp(7 as never), TypeError, '7'],
  ['parsers', () => createApp({ parsers: 'text' as never }), TypeError, '"text"'],
  [
    'parsers.text',
    () => createApp({ parsers: { text: 'text/*' as never } }),
    TypeError,
    '"text/*"',
  ],
  ['parsers.raw[]', () => createApp({ parsers: { raw: ['nonsense'] } }), RangeError, '"nonsense"'],
  ['parsers.raw[] type', () => createApp({ parsers: { raw: [1 as never] } }), TypeError, '1'],
  ['compression', () => createApp({ compression: 'br' as never }), TypeError, '"br"'],
  [
    'compression.encodings',
    () => createApp({ compression: { encodings: [] } }),
    RangeError,
    'an array',
  ],
  [
    'compression.brotliQuality',
    () => createApp({ compression: { brotliQuality: 12 } }),
    RangeError,
    '12',
  ],
  ['compression.gzipLevel', () => createApp({ compression: { gzipLevel: 0 } }), RangeError, '0'],
  ['compression.threshold', () => createApp({ compression: { threshold: -1 } }), RangeError, '-1'],
  ['graphql', () => createApp({ graphql: 1 as never }), TypeError, '1'],
  ['graphql.maxDepth', () => createApp({ graphql: { maxDepth: 0 } }), RangeError, '0'],
  [
    'graphql.introspection',
    () => createApp({ graphql: { introspection: 1 as never } }),
    TypeError,
    '1',
  ],
  ['trustProxy hops', () => createApp({ trustProxy: -1 }), RangeError, '-1'],
  ['trustProxy address', () => createApp({ trustProxy: ['nope'] }), RangeError, '"nope"'],
  [
    'trustProxy type',
    () => createApp({ trustProxy: {} as AppOptions['trustProxy'] }),
    TypeError,
    'an object',
  ],
  ['route handler', () => createApp().get('/', 'x' as never), TypeError, '"x"'],
  ['route options', () => createApp().post('/', 5 as never, () => {}), TypeError, '5'],
  ['route bodyLimit', () => createApp().post('/', { bodyLimit: -2 }, () => {}), RangeError, '-2'],
  ['middleware', () => createApp().use(null as never), TypeError, 'null'],
  ['onError', () => createApp().onError(1 as never), TypeError, '1'],
  ['onResponse', () => createApp().onResponse({} as never), TypeError, 'an object'],
  ['close timeoutMs', () => createApp().close({ timeoutMs: -1 }), RangeError, '-1'],
  ['close timeoutMs type', () => createApp().close({ timeoutMs: '1' as never }), TypeError, '"1"'],
  [
    'close timeoutMs over 2^31-1',
    () => createApp().close({ timeoutMs: 3e9 }),
    RangeError,
    '3000000000',
  ],
  ['HttpException status', () => new HttpException(200), RangeError, '200'],
  ['HttpException status type', () => new HttpException('404' as never), TypeError, '"404"'],
  [
    'HttpException message',
    () => new HttpException(404, { a: 1 } as never),
    TypeError,
    'an object',
  ],
  ['BadRequestError message', () => new BadRequestError(5 as never), TypeError, '5'],
  ['BodyTooLargeError limit', () => new BodyTooLargeError(-1), RangeError, '-1'],
  ['BodyTooLargeError limit type', () => new BodyTooLargeError('1kb' as never), TypeError, '"1kb"'],
  ['cors.origin', () => cors({ origin: 5 as never }), TypeError, '5'],
  [
    'cors.origin with credentials',
    () => cors({ origin: '*', credentials: true }),
    RangeError,
    '"*"',
  ],
  ['cors.credentials', () => cors({ credentials: 'yes' as never }), TypeError, '"yes"'],
  ['cors.methods', () => cors({ methods: 'GET' as never }), TypeError, '"GET"'],
  ['cors.methods[]', () => cors({ methods: ['GET\r\nX: 1'] }), RangeError, '"GET\\r\\nX: 1"'],
  ['cors.maxAge', () => cors({ maxAge: -5 }), RangeError, '-5'],
  ['hub options', () => createEventHub(3 as never), TypeError, '3'],
  ['hub store', () => createEventHub({ store: {} as never }), TypeError, 'undefined'],
  ['hub onSlowClient', () => createEventHub({ onSlowClient: 'x' as never }), TypeError, '"x"'],
  ['memoryStore bufferSize', () => memoryStore({ bufferSize: -1 }), RangeError, '-1'],
  ['publish event', () => createEventHub().publish('a\nb', 1), RangeError, '"a\\nb"'],
  ['publish event type', () => createEventHub().publish(42 as never, 1), TypeError, '42'],
  ['publish keel: event', () => createEventHub().publish('keel:x', 1), RangeError, '"keel:x"'],
  ['publish topic', () => createEventHub().publish('x', 1, { topic: '' }), RangeError, '""'],
  ['invalidate target', () => createEventHub().invalidate(null as never), TypeError, 'null'],
  [
    'invalidate source',
    () => createEventHub().invalidate('/x', { source: 'a b' }),
    RangeError,
    '"a b"',
  ],
  ['validate rules', () => validate(null as never, {}), TypeError, 'null'],
  ['validate rules.a', () => validate({ a: 1 } as never, {}), TypeError, '1'],
  [
    'validate rules.a.type',
    () => validate({ a: { type: 'date' } } as never, {}),
    RangeError,
    '"date"',
  ],
  ['validate rules.a.pattern', () => validate({ a: { pattern: '(' } }, {}), RangeError, '"("'],
  [
    'validate rules.a.required',
    () => validate({ a: { required: 1 } } as never, {}),
    TypeError,
    '1',
  ],
];

describe('every check throws one template, TypeError for the type, RangeError for the value', () => {
  it.each(cases)('%s', (_what, call, type, shows) => {
    let caught: unknown;
    try {
      call();
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(type);
    expect((caught as Error).constructor).toBe(type);
    expect((caught as Error).message).toMatch(TEMPLATE);
    expect((caught as Error).message.endsWith(`, got ${shows}`)).toBe(true);
  });

  it('ctx methods too (thrown in the handler, reported to onError)', async () => {
    const app = createApp();
    const errors: Error[] = [];
    app.onError((err) => {
      errors.push(err as Error);
    });
    const calls: ((ctx: Context) => unknown)[] = [
      (ctx) => ctx.status(700),
      (ctx) => ctx.status('200' as never),
      (ctx) => ctx.cacheControl({ maxAge: -1 }),
      (ctx) => ctx.cacheControl({ maxAge: '1' as never }),
      (ctx) => ctx.redirect(''),
      (ctx) => ctx.redirect('/x', 304),
      (ctx) => ctx.redirect(5 as never),
      (ctx) => ctx.sseInterval(() => 1, 0),
      (ctx) => ctx.sendFile('x', { dotfiles: 'show' as never }),
      (ctx) => ctx.setCookie('a', 'b', { sameSite: 'lax ' as never }),
      (ctx) => ctx.setCookie('a', 'b', { expires: 1 as never }),
      (ctx) => ctx.setCookie('a', 'b', { maxAge: Number.POSITIVE_INFINITY }),
      (ctx) => ctx.header(5 as never),
    ];
    calls.forEach((call, i) => {
      app.get(`/${i}`, call);
    });
    for (let i = 0; i < calls.length; i++) {
      expect((await app.inject({ url: `/${i}` })).status).toBe(500);
    }
    expect(errors.map((e) => e.constructor.name)).toEqual([
      'RangeError',
      'TypeError',
      'RangeError',
      'TypeError',
      'RangeError',
      'RangeError',
      'TypeError',
      'RangeError',
      'RangeError',
      'RangeError',
      'TypeError',
      'RangeError',
      'TypeError',
    ]);
    for (const err of errors) expect(err.message).toMatch(TEMPLATE);
  });

  it('no module but checks.ts builds a TypeError or RangeError itself', () => {
    const src = fileURLToPath(new URL('../src/', import.meta.url));
    const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter(
      (f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && f !== 'checks.ts',
    );
    const offenders = files.filter((f) =>
      /new (?:Type|Range)Error\(/.test(readFileSync(join(src, f), 'utf8')),
    );
    expect(offenders).toEqual([]);
  });

  it('a misuse of the app is a keel: message too (next() twice, a second response, no response)', async () => {
    const app = createApp();
    const errors: Error[] = [];
    app.onError((err) => {
      errors.push(err as Error);
    });
    app.use(async (ctx, next) => {
      await next();
      if (ctx.path === '/next-twice') await next();
    });
    app.get('/next-twice', (ctx) => ctx.json(1));
    app.get('/answer-twice', (ctx) => {
      ctx.json(1);
      ctx.json(2);
    });
    app.get('/no-answer', () => {});
    const twice = await app.inject({ url: '/answer-twice' });
    // The first answer stands; the second call throws, reported to onError.
    expect(twice.status).toBe(200);
    expect(twice.json()).toBe(1);
    await app.inject({ url: '/next-twice' });
    expect((await app.inject({ url: '/no-answer' })).status).toBe(500);
    expect(errors.map((e) => [e.constructor.name, e.message])).toEqual([
      ['Error', 'keel: a response was already sent for this request'],
      ['Error', 'keel: next() was called more than once'],
      [
        'Error',
        'keel: the handler for GET /no-answer sent no response (a returned value is not sent: return ctx.json(value), ctx.send(...) or another ctx response)',
      ],
    ]);
  });

  it('BadRequestError is an answer, not a check: its message is free text', () => {
    expect(new BadRequestError('Nope').message).toBe('Nope');
  });
});
