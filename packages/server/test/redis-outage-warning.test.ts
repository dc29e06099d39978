// The default report of a Redis outage (no onError): one process warning naming the server (its
// password redacted) and why it cannot be reached, not ioredis's "MaxRetriesPerRequestError
// (which is 0)" of the read that was cut; and one notice when the reader is back. Real
// redis-server, stopped and restarted under a hub.
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApp, createEventHub, HubPublishError } from '../src/index';
import { redisStreams } from '../src/redis/index';
import { sse, start, until } from './helpers';
import { publishWhenUp, startRedis, streamKey } from './redis-helpers';

const warnings: string[] = [];
const onWarning = (w: Error): void => {
  if (w.message.includes('Redis event store')) warnings.push(w.message);
};
beforeEach(() => {
  warnings.length = 0;
  process.on('warning', onWarning);
});
afterEach(() => {
  process.off('warning', onWarning);
});

const reconnect = { initialDelay: 10, maxDelay: 50 };

describe('redisStreams: the outage warning', () => {
  it('names the URL and the connection error once per outage, and says when Redis is back', async () => {
    const server = await startRedis();
    const stream = streamKey();
    const hub = createEventHub({ store: redisStreams({ url: server.url, stream, reconnect }) });
    try {
      await hub.ready;
      await server.stop();
      await until(() => warnings.length > 0);
      // Let the reader and its connection retry a few times more: still one warning.
      await new Promise((r) => setTimeout(r, 300));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(server.url);
      expect(warnings[0]).toContain('ECONNREFUSED');
      expect(warnings[0]).not.toContain('MaxRetriesPerRequest');

      // A password in the URL is not printed.
      const secret = createEventHub({
        store: redisStreams({
          url: server.url.replace('//', '//keel:hunter2@'),
          stream,
          reconnect,
        }),
      });
      await until(() => warnings.length === 2);
      await secret.close();
      expect(warnings[1]).toContain(`redis://keel:***@127.0.0.1:${server.port}`);
      expect(warnings[1]).toContain('ECONNREFUSED');
      expect(warnings[1]).not.toContain('hunter2');

      await server.start();
      await publishWhenUp(hub, 'back');
      await until(() => warnings.length === 3);
      expect(warnings[2]).toMatch(/^keel: the Redis event store reads .* again$/);
      expect(warnings[2]).toContain(server.url);
      await new Promise((r) => setTimeout(r, 100));
      expect(warnings).toHaveLength(3);
    } finally {
      await hub.close();
      await server.dispose();
    }
  }, 20_000);
});

describe('redisStreams: a publish during an outage', () => {
  for (const mode of ['own connection', 'shared client'] as const) {
    it(`${mode}: rejects naming the store (not its password), with the connection error as cause`, async () => {
      const server = await startRedis();
      const stream = streamKey();
      // A user with a password, so the URL carries one and the store still connects.
      const admin = new Redis(server.url);
      await admin.call('ACL', 'SETUSER', 'keel', 'on', '>hunter2', '~*', '&*', '+@all');
      admin.disconnect();
      const url = server.url.replace('//', '//keel:hunter2@');
      // A shared client's errors are its owner's to handle (here: ignored).
      const client =
        mode === 'shared client'
          ? new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0 }).on(
              'error',
              () => {},
            )
          : undefined;
      const hub = createEventHub({
        store: redisStreams(
          client === undefined
            ? { url, stream, reconnect, onError: () => {} }
            : { client, stream, reconnect, onError: () => {} },
        ),
      });
      try {
        await hub.ready;
        await hub.publish('x', 'up');
        await server.stop();
        // Each publish is refused at once; the connection's own error is known once a reconnect
        // was refused.
        let error: unknown = null;
        for (let i = 0; i < 500; i++) {
          error = await hub.publish('x', 'down').then(
            () => null,
            (e: unknown) => e,
          );
          const cause = (error as { cause?: { cause?: { code?: unknown } } } | null)?.cause;
          if (cause?.cause?.code === 'ECONNREFUSED') break;
          await new Promise((r) => setTimeout(r, 5));
        }
        expect(error).toBeInstanceOf(HubPublishError);
        const cause = (error as HubPublishError).cause as Error;
        expect(cause.message).toContain(`redis://keel:***@127.0.0.1:${server.port}`);
        expect(cause.message).toContain(stream);
        expect(cause.message).toContain('ECONNREFUSED');
        expect(cause.message).not.toContain('hunter2');
        expect((cause.cause as { code?: unknown }).code).toBe('ECONNREFUSED');
        // What an HTTP client is sent (a 503) names no server.
        expect(JSON.stringify(error)).not.toContain('127.0.0.1');
      } finally {
        await hub.close();
        client?.disconnect();
        await server.dispose();
      }
    }, 20_000);
  }
});

describe('redisStreams: a replay during an outage', () => {
  for (const mode of ['own connection', 'shared client'] as const) {
    it(`${mode}: rejects naming the store (not its password) and stream, with the connection error as cause; a client is ended, nothing held`, async () => {
      const server = await startRedis();
      const stream = streamKey();
      const admin = new Redis(server.url);
      await admin.call('ACL', 'SETUSER', 'keel', 'on', '>hunter2', '~*', '&*', '+@all');
      admin.disconnect();
      const url = server.url.replace('//', '//keel:hunter2@');
      const client =
        mode === 'shared client'
          ? new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0 }).on(
              'error',
              () => {},
            )
          : undefined;
      // No recent events in memory: every replay asks Redis.
      const common = { stream, reconnect, bufferSize: 0, onError: () => {} };
      const store = redisStreams(client === undefined ? { url, ...common } : { client, ...common });
      const hub = createEventHub({ store });
      const app = createApp();
      const responses: { status: number; finished: boolean }[] = [];
      app.onResponse((_ctx, { status, finished }) => {
        responses.push({ status, finished });
      });
      app.get('/events', (ctx) => hub.connect(ctx));
      try {
        const { port } = await start(app);
        await hub.ready;
        const first = await hub.publish('x', 'one');
        const second = await hub.publish('x', 'two');
        await until(() => hub.lastId === second);
        await server.stop();

        const replay = (after: string): Promise<unknown> =>
          Promise.resolve(
            store.replay({ after, upTo: second, include: () => true, maxBytes: 1 << 20 }),
          ).then(
            () => null,
            (e: unknown) => e,
          );
        // `first`: read from Redis (XRANGE); past `second`: an id from a faster instance, looked
        // up in Redis. Refused at once; the connection's own error is known once a reconnect was
        // refused.
        const [ms] = second.split('-');
        for (const after of [first, `${Number(ms) + 1}-0`]) {
          let error: unknown = null;
          for (let i = 0; i < 500; i++) {
            error = await replay(after);
            const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
            if (cause?.code === 'ECONNREFUSED') break;
            await new Promise((r) => setTimeout(r, 5));
          }
          expect(error).toBeInstanceOf(Error);
          const message = (error as Error).message;
          expect(message).toContain(`redis://keel:***@127.0.0.1:${server.port}`);
          expect(message).toContain(stream);
          expect(message).toContain('ECONNREFUSED');
          expect(message).not.toContain('hunter2');
          expect(message).not.toContain("isn't writeable");
          expect(((error as Error).cause as { code?: unknown }).code).toBe('ECONNREFUSED');
        }

        // A client reconnecting with its Last-Event-ID: the stream opens (200) and is ended, so
        // its EventSource retries with the same id; no event, no reset, nothing left attached.
        const events = await sse(port, '/events', { 'last-event-id': first });
        await events.ended;
        expect(events.status).toBe(200);
        expect(events.headers['content-type']).toMatch(/^text\/event-stream/);
        expect(events.events).toEqual([]);
        await until(() => responses.length === 1);
        expect(hub.size).toBe(0);
        expect(responses).toEqual([{ status: 200, finished: true }]);
      } finally {
        await app.close();
        await hub.close();
        client?.disconnect();
        await server.dispose();
      }
    }, 20_000);
  }
});

describe('redisStreams: a replay that fails', () => {
  it('is reported once per outage and counted; the client resumes exactly once Redis is back', async () => {
    const server = await startRedis({ persistent: true });
    const stream = streamKey();
    const hubWarnings: string[] = [];
    const onHubWarning = (w: Error): void => {
      if (w.message.includes('event hub could not replay')) hubWarnings.push(w.message);
    };
    process.on('warning', onHubWarning);
    // No recent events in memory: every replay asks Redis.
    const hub = createEventHub({
      store: redisStreams({ url: server.url, stream, reconnect, bufferSize: 0, onError: () => {} }),
    });
    const app = createApp();
    app.get('/events', (ctx) => hub.connect(ctx));
    const clients: { close(): void }[] = [];
    try {
      const { port } = await start(app);
      await hub.ready;
      const first = await hub.publish('x', 'one');
      const second = await hub.publish('x', 'two');
      await until(() => hub.lastId === second);
      await server.stop();

      // Two clients retrying during the outage: each is ended (so its EventSource retries with
      // the same id), the failure is reported once, naming the id and what Redis said.
      for (let i = 0; i < 2; i++) {
        const events = await sse(port, '/events', { 'last-event-id': first });
        clients.push(events);
        await events.ended;
        expect(events.events).toEqual([]);
      }
      expect(hub.metrics.replayFailures).toBe(2);
      await until(() => hubWarnings.length > 0);
      await new Promise((r) => setTimeout(r, 50));
      expect(hubWarnings).toHaveLength(1);
      expect(hubWarnings[0]).toContain(JSON.stringify(first));
      expect(hubWarnings[0]).toContain(server.url);

      await server.start();
      const third = await publishWhenUp(hub, 'three');
      await until(() => hub.lastId === third);
      const back = await sse(port, '/events', { 'last-event-id': first });
      clients.push(back);
      await back.waitFor(2);
      expect(back.events).toEqual([
        { id: second, event: 'x', data: 'two' },
        { id: third, event: 'n', data: 'three' },
      ]);
      // A later outage is reported again.
      await server.stop();
      const again = await sse(port, '/events', { 'last-event-id': first });
      clients.push(again);
      await again.ended;
      await until(() => hubWarnings.length === 2);
    } finally {
      process.off('warning', onHubWarning);
      for (const c of clients) c.close();
      await app.close();
      await hub.close();
      await server.dispose();
    }
  }, 20_000);
});
