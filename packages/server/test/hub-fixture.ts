// The hub setup the store replay tests share: a store whose replay answers are recorded, and an
// app serving a hub on it (in memory or on the file's redis-server).
import {
  type App,
  type AppOptions,
  type Context,
  createApp,
  createEventHub,
  type EventHub,
  type EventHubOptions,
  type HubStore,
  type ReplayRequest,
  type ReplayResult,
  type StoreSink,
} from '../src/index';
import { type RedisStreamsOptions, redisStreams } from '../src/redis/index';
import { start } from './helpers';
import type { redisInstances } from './redis-helpers';

/** A sink for a store opened outside a hub (its deliveries are not looked at). */
export const noSink: StoreSink = { deliver() {}, reset() {} };

/** `inner`, its replay answers recorded as the hub gets them (the store itself unchanged). */
export function recordedReplays(inner: HubStore): { store: HubStore; answers: ReplayResult[] } {
  const answers: ReplayResult[] = [];
  const note = (answer: ReplayResult): ReplayResult => {
    answers.push(answer);
    return answer;
  };
  const store: HubStore = {
    open: (target) => inner.open(target),
    append: (event, data, topic) => inner.append(event, data, topic),
    replay(request) {
      const answer = inner.replay(request);
      return answer instanceof Promise ? answer.then(note) : note(answer);
    },
    close: () => inner.close(),
  };
  return { store, answers };
}

/**
 * A memory store whose replays answer only when the test lets them (`release(i)`, or
 * `release(i, error)` to fail it): a slow store, its answers the real store's.
 */
export function heldReplays(inner: HubStore) {
  const calls: { request: ReplayRequest; settle: (error?: Error) => void }[] = [];
  const store: HubStore = {
    open: (target) => inner.open(target),
    append: (event, data, topic) => inner.append(event, data, topic),
    replay(request) {
      return new Promise<ReplayResult>((resolve, reject) => {
        calls.push({
          request,
          settle: (error) => (error ? reject(error) : resolve(inner.replay(request))),
        });
      });
    },
    close: () => inner.close(),
  };
  return { store, calls };
}

/** Events handed back over all `answers` (none for a reset or `ahead`). */
export const listedIn = (answers: readonly ReplayResult[]): number =>
  answers.reduce((sum, a) => sum + (a.kind === 'events' ? a.events.length : 0), 0);

/** Options of {@link hubApp}: the hub's own (but its store), and the topics of a request. */
export interface HubAppOptions extends Omit<EventHubOptions, 'store'> {
  topics?: (ctx: Context) => readonly string[];
}

/**
 * A hub on `store` (with the other hub `options`) served by `app` on 127.0.0.1:0: `GET /events`
 * connects a client (with the `topics` of its request, if given).
 */
export async function hubApp(
  app: App,
  store: HubStore,
  { topics, ...options }: HubAppOptions = {},
): Promise<{ hub: EventHub; port: number }> {
  const hub = createEventHub({ ...options, store });
  app.get('/events', (ctx) =>
    topics === undefined ? hub.connect(ctx) : hub.connect(ctx, { topics: topics(ctx) }),
  );
  const { port } = await start(app);
  return { hub, port };
}

/**
 * {@link hubApp} on a fresh stream of the file's redis-server (`live`), its replay answers
 * recorded; closed after the test; resolves once the hub is ready.
 */
export async function redisHubApp(
  live: ReturnType<typeof redisInstances>,
  options: RedisStreamsOptions,
  appOptions?: AppOptions,
) {
  const app = createApp(appOptions);
  const { store, answers } = recordedReplays(redisStreams({ url: live.redis.url, ...options }));
  const { hub, port } = await hubApp(app, store);
  live.trackApp(app, hub);
  await hub.ready;
  return { app, hub, port, answers };
}
