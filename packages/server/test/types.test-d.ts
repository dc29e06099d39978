import { createServer, type Server } from 'node:http';
import {
  createServer as createHttp2Server,
  createSecureServer,
  type Http2SecureServer,
  type Http2Server,
} from 'node:http2';
import { Readable } from 'node:stream';
import type { Clock as CoreClock } from '@keel/core';
import { describe, expectTypeOf, it } from 'vitest';
import {
  BadRequestError,
  type Clock,
  type Context,
  cors,
  createApp,
  createEventHub,
  type Handler,
  HttpException,
  isBadRequestError,
  isHttpException,
  isHubPublishError,
  type Middleware,
  type Rules,
  type SseStream,
  type Validated,
} from '../src/index';

declare const ctx: Context;
declare const stream: SseStream;
declare const err: unknown;

describe('Validated<R>: what ctx.validate returns', () => {
  it('required fields are present, the others optional; types follow the rule', () => {
    const data = ctx.validate({
      name: { type: 'string', required: true },
      email: { type: 'email', required: true },
      age: { type: 'integer' },
      score: { type: 'number', required: true },
      admin: { type: 'boolean' },
      note: {},
    });
    expectTypeOf(data.name).toEqualTypeOf<string>();
    expectTypeOf(data.email).toEqualTypeOf<string>();
    expectTypeOf(data.score).toEqualTypeOf<number>();
    expectTypeOf(data.age).toEqualTypeOf<number | undefined>();
    expectTypeOf(data.admin).toEqualTypeOf<boolean | undefined>();
    expectTypeOf(data.note).toEqualTypeOf<string | number | boolean | undefined>();
    // @ts-expect-error: only the declared fields
    void data.other;
  });

  it('rules kept in a variable type the same (as const)', () => {
    const rules = { id: { type: 'integer', required: true } } as const;
    expectTypeOf(ctx.validate(rules)).toEqualTypeOf<Validated<typeof rules>>();
    expectTypeOf(ctx.validate(rules).id).toEqualTypeOf<number>();
    expectTypeOf(rules).toMatchTypeOf<Rules>();
  });

  it('refuses rules that are not rules', () => {
    // @ts-expect-error: an unknown type
    ctx.validate({ a: { type: 'date' } });
    // @ts-expect-error: min is a number
    ctx.validate({ a: { min: '1' } });
  });
});

describe('App', () => {
  const app = createApp();

  it('routes take a handler, or options and a handler, and chain', () => {
    expectTypeOf(app.get('/a', (c) => c.json(1))).toEqualTypeOf(app);
    app.post('/b', { bodyLimit: 1024, parsers: { raw: ['image/*'] } }, (c) => {
      expectTypeOf(c).toEqualTypeOf<Context>();
      expectTypeOf(c.body).toBeUnknown();
    });
    // @ts-expect-error: not a route option
    app.post('/c', { limit: 1 }, () => {});
    expectTypeOf(cors()).toEqualTypeOf<Middleware>();
    expectTypeOf<Handler>().parameter(0).toEqualTypeOf<Context>();
  });

  it('serverOptions goes into an own server, alone or spread with its other options', () => {
    expectTypeOf(createServer(app.serverOptions, app.handler)).toEqualTypeOf<Server>();
    createServer({ ...app.serverOptions, requestTimeout: 30_000 }, app.handler);
    // @ts-expect-error: read-only
    app.serverOptions = { ServerResponse: app.serverOptions.ServerResponse };
  });

  it('handler and attach take HTTP/1 and HTTP/2 servers, attach returning the server given', () => {
    expectTypeOf(app.attach(createServer(app.handler))).toEqualTypeOf<Server>();
    expectTypeOf(app.attach(createHttp2Server(app.handler))).toEqualTypeOf<Http2Server>();
    expectTypeOf(
      app.attach(createSecureServer({ allowHTTP1: true }, app.handler)),
    ).toEqualTypeOf<Http2SecureServer>();
    // @ts-expect-error: not a server
    app.attach({});
  });
});

describe('ctx.send', () => {
  it('a stream gives a promise to return; bytes, text and objects give nothing', () => {
    expectTypeOf(ctx.send(Readable.from(['x']))).toEqualTypeOf<Promise<void>>();
    expectTypeOf(ctx.send(new ReadableStream<Uint8Array>())).toEqualTypeOf<Promise<void>>();
    expectTypeOf(ctx.send(new ArrayBuffer(1))).toEqualTypeOf<void>();
    expectTypeOf(ctx.send(new Float32Array(1))).toEqualTypeOf<void>();
    expectTypeOf(ctx.send('x')).toEqualTypeOf<void>();
    expectTypeOf(ctx.send({ a: 1 })).toEqualTypeOf<void>();
    expectTypeOf(ctx.send(null)).toEqualTypeOf<void>();
  });
});

describe('no internal is reachable through the types', () => {
  it('ctx: readonly request data, no underscored members, no constructor', () => {
    // @ts-expect-error: readonly
    ctx.params = {};
    // @ts-expect-error: readonly
    ctx.method = 'POST';
    // @ts-expect-error: readonly
    ctx.requestId = 'x';
    // @ts-expect-error: read-only (a getter)
    ctx.path = '/other';
    ctx.body = { replaced: true }; // middleware may replace the body
    // @ts-expect-error: internals are #private
    void ctx._slot;
    // @ts-expect-error: internals are #private
    ctx._end(null, null);
    // @ts-expect-error: the app makes ctx objects
    new (ctx.constructor as typeof Context)();
  });

  it('SseStream: state is read-only, frames go through send', () => {
    expectTypeOf(stream.closed).toEqualTypeOf<boolean>();
    expectTypeOf(stream.lastId).toEqualTypeOf<number>();
    // @ts-expect-error: read-only
    stream.closed = true;
    // @ts-expect-error: read-only
    stream.dropped = false;
    // @ts-expect-error: raw frames are the hub's
    stream.write('data: x\n\n');
    // @ts-expect-error: the registry's
    stream.heartbeat();
  });
});

describe('errors', () => {
  it('one guard per class narrows unknown', () => {
    if (isHttpException(err)) expectTypeOf(err.status).toEqualTypeOf<number>();
    if (isBadRequestError(err)) expectTypeOf(err.fields).toMatchTypeOf<readonly unknown[]>();
    if (isHubPublishError(err)) expectTypeOf(err.reason).toEqualTypeOf<'closed' | 'store'>();
  });

  it('literal names on the leaf classes; one constructor form', () => {
    expectTypeOf(new BadRequestError().name).toEqualTypeOf<'BadRequestError'>();
    expectTypeOf(new HttpException(404).name).toEqualTypeOf<string>();
    new BadRequestError('Nope', { fields: [], cause: err, headers: { a: 'b' } });
    // @ts-expect-error: fields go in the options
    new BadRequestError('Nope', []);
  });
});

describe('the hub', () => {
  it('publish resolves with the id; ids are strings', () => {
    const hub = createEventHub();
    expectTypeOf(hub.publish('x', 1)).toEqualTypeOf<Promise<string>>();
    expectTypeOf(hub.invalidate('/todos')).toEqualTypeOf<Promise<string>>();
    expectTypeOf(hub.lastId).toEqualTypeOf<string>();
    expectTypeOf(hub.connect(ctx)).toEqualTypeOf<SseStream>();
    // @ts-expect-error: a predicate cannot be sent
    void hub.invalidate(() => true);
  });
});

describe('Clock', () => {
  it("is core's Clock, structurally: one fake clock drives both", () => {
    expectTypeOf<Clock>().toEqualTypeOf<CoreClock>();
    const core: CoreClock = { now: () => 0, setTimeout: () => 0, clearTimeout: () => {} };
    createApp({ clock: core });
  });
});

describe('request accessors as the ctx spec types them', () => {
  it('ctx.ips is an array of string (spec: "array of string"), ctx.ip a string', () => {
    expectTypeOf(ctx.ips).toEqualTypeOf<string[]>();
    expectTypeOf(ctx.ip).toEqualTypeOf<string>();
    const mine: string[] = ctx.ips;
    mine.push('10.0.0.9');
  });
});
