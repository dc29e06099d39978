// A misspelt option was dropped in silence: `createApp({ requestTimeot })` kept Node's 300 s,
// `hub.publish(e, d, { topics: ['team-1'] })` broadcast a team's event to every client, and
// `cors({ origins })` answered every origin. TypeScript catches these; JavaScript did not. Every
// options object the server takes now refuses a key it does not know, naming it and the closest
// known one.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  BadRequestError,
  BodyTooLargeError,
  cors,
  createApp,
  createEventHub,
  HttpException,
  memoryStore,
} from '../src/index';
import { redisStreams } from '../src/redis/index';
import { sse, start, trackApps, until } from './helpers';

const app = trackApps();

/** The RangeError every unknown key gets: the key, the closest known one, then the list. */
function unknownKey(where: string, key: string, suggestion?: string): RegExp {
  const hint = suggestion === undefined ? '' : ` \\(did you mean \`${suggestion}\`\\?\\)`;
  return new RegExp(
    `^keel: \`${where}\` must be an object with only the keys .*, got "${key}"${hint}$`,
  );
}

describe('an unknown option key is a RangeError naming it', () => {
  it.each([
    [
      'createApp',
      () => createApp({ requestTimeot: 5000 } as never),
      'createApp options',
      'requestTimeot',
      'requestTimeout',
    ],
    [
      'createApp, by case',
      () => createApp({ bodylimit: 1 } as never),
      'createApp options',
      'bodylimit',
      'bodyLimit',
    ],
    [
      'createApp, Fastify name',
      () => createApp({ logger: true } as never),
      'createApp options',
      'logger',
      undefined,
    ],
    [
      'sse',
      () => createApp({ sse: { heartbeatMS: 1 } } as never),
      'sse',
      'heartbeatMS',
      'heartbeatMs',
    ],
    [
      'graphql',
      () => createApp({ graphql: { maxDepht: 3 } } as never),
      'graphql',
      'maxDepht',
      'maxDepth',
    ],
    [
      'compression',
      () => createApp({ compression: { treshold: 0 } } as never),
      'compression',
      'treshold',
      'threshold',
    ],
    [
      'parsers',
      () => createApp({ parsers: { txt: ['text/plain'] } } as never),
      'parsers',
      'txt',
      'text',
    ],
    [
      'cors',
      () => cors({ origins: ['https://a.test'] } as never),
      'cors options',
      'origins',
      'origin',
    ],
    [
      'createEventHub',
      () => createEventHub({ buffersize: 5 } as never),
      'createEventHub options',
      'buffersize',
      'bufferSize',
    ],
    [
      'memoryStore',
      () => memoryStore({ bufferBytes: 1, maxEvents: 2 } as never),
      'memoryStore options',
      'maxEvents',
      undefined,
    ],
    [
      'redisStreams',
      () => redisStreams({ url: 'redis://127.0.0.1:1', maxlen: 10 } as never),
      'redisStreams options',
      'maxlen',
      'maxLen',
    ],
    [
      'redisStreams reconnect',
      () => redisStreams({ url: 'redis://127.0.0.1:1', reconnect: { maxdelay: 1 } } as never),
      'reconnect',
      'maxdelay',
      'maxDelay',
    ],
    [
      'HttpException',
      () => new HttpException(418, 'teapot', { header: { a: 'b' } } as never),
      'HttpException options',
      'header',
      'headers',
    ],
    [
      'BadRequestError',
      () => new BadRequestError('bad', { field: [] } as never),
      'BadRequestError options',
      'field',
      'fields',
    ],
    [
      'BodyTooLargeError',
      () => new BodyTooLargeError(1, undefined, { close: true } as never),
      'BodyTooLargeError options',
      'close',
      'closeConnection',
    ],
  ])('%s', (_, make, where, key, suggestion) => {
    expect(make).toThrow(RangeError);
    expect(make).toThrow(unknownKey(where, key, suggestion));
  });

  it('route options', () => {
    const a = app();
    expect(() => a.post('/x', { bodylimit: 10 } as never, (ctx) => ctx.send('ok'))).toThrow(
      unknownKey('options of POST /x', 'bodylimit', 'bodyLimit'),
    );
  });

  it('listen timeouts reject, and no server is left listening', async () => {
    const a = app();
    await expect(
      Promise.resolve().then(() => a.listen(0, '127.0.0.1', { keepAliveTimout: 5 } as never)),
    ).rejects.toThrow(unknownKey('listen timeouts', 'keepAliveTimout', 'keepAliveTimeout'));
  });

  it('close options', () => {
    const a = createApp();
    expect(() => a.close({ timeoutMS: 5 } as never)).toThrow(
      unknownKey('close options', 'timeoutMS', 'timeoutMs'),
    );
  });

  it('inject requests', async () => {
    const a = app();
    a.get('/', (ctx) => ctx.send('ok'));
    await expect(a.inject({ url: '/', header: {} } as never)).rejects.toThrow(
      unknownKey('inject request', 'header', 'headers'),
    );
  });

  it('sendFile: the handler throws, the request gets 500 and onError the message', async () => {
    const root = mkdtempSync(join(tmpdir(), 'keel-unknown-'));
    writeFileSync(join(root, 'a.txt'), 'a');
    const a = app();
    const errors: unknown[] = [];
    a.onError((error, ctx) => {
      errors.push(error);
      return ctx.status(500).send('failed');
    });
    a.get('/a', (ctx) => ctx.sendFile('a.txt', { rot: root } as never));
    const res = await a.inject({ url: '/a' });
    expect(res.status).toBe(500);
    expect((errors[0] as Error).message).toMatch(unknownKey('sendFile options', 'rot', 'root'));
  });
});

describe('a misspelt topic never widens who receives an event', () => {
  it('publish with `topics` is refused, not broadcast', async () => {
    const a = app();
    const hub = createEventHub();
    a.get('/events', (ctx) => hub.connect(ctx, { topics: [] }));
    const { port } = await start(a);
    const outsider = await sse(port, '/events');
    await until(() => hub.size === 1);
    expect(() => hub.publish('secret', { pay: 1 }, { topics: ['team-1'] } as never)).toThrow(
      unknownKey('publish options', 'topics', 'topic'),
    );
    expect(() => hub.invalidate('/payroll', { topics: ['team-1'] } as never)).toThrow(
      unknownKey('invalidate options', 'topics', 'topic'),
    );
    await hub.publish('public', 1);
    await until(() => outsider.events.length > 0);
    expect(outsider.events.map((e) => e.event)).toEqual(['public']);
    outsider.close();
  });

  it('connect with `topic` is refused, not a subscription to every broadcast', async () => {
    const a = app();
    const hub = createEventHub();
    const errors: unknown[] = [];
    a.onError((error, ctx) => {
      errors.push(error);
      return ctx.status(500).send('failed');
    });
    a.get('/events', (ctx) => hub.connect(ctx, { topic: 'team-1' } as never));
    const res = await a.inject({ url: '/events' });
    expect(res.status).toBe(500);
    expect((errors[0] as Error).message).toMatch(unknownKey('connect options', 'topic', 'topics'));
    expect(hub.size).toBe(0);
  });
});

describe('known keys still pass', () => {
  it('every documented key of createApp is accepted together', () => {
    expect(() =>
      createApp({
        bodyLimit: 1,
        maxJsonDepth: 10,
        parsers: { text: ['text/plain'], raw: ['application/octet-stream'] },
        trustProxy: false,
        poolSize: 1,
        development: false,
        sse: { heartbeatMs: 1000, maxBufferedBytes: 1024 },
        sendTimeout: 1000,
        ignoreTrailingSlash: true,
        caseSensitive: false,
        graphql: { maxDepth: 5, introspection: false },
        compression: { threshold: 10, encodings: ['gzip'], brotliQuality: 4, gzipLevel: 6 },
        requestIdHeader: false,
        maxParamLength: 50,
        requestTimeout: 10_000,
        headersTimeout: 5_000,
        keepAliveTimeout: 1_000,
      }),
    ).not.toThrow();
  });

  it('keys set to undefined are known keys, as before', () => {
    expect(() => createApp({ bodyLimit: undefined, sse: undefined })).not.toThrow();
  });
});
