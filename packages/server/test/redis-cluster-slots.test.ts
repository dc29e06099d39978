// The store does not follow Redis Cluster redirects: on a cluster node that does not serve the
// stream's hash slot, every command on the key is answered `CLUSTERDOWN` (no node serves it, or
// the cluster is down) or `MOVED <slot> <host:port>` (another node does), which retrying cannot
// fix. At open, `hub.ready` rejects with a RedisStoreError (`CLUSTER`) saying so, once, with no
// onError call (it used to retry as an outage for ever, `hub.ready` never settling). After open
// (the slot moved away), it is reported once, publishes reject with it as cause, and the store
// retries: the slot back, it reads and publishes again. A node that serves the slot works.
// Real redis-servers started with `--cluster-enabled yes` (each one's nodes.conf in its dir).
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, startRedis } from '../../../scripts/redis-server.mjs';
import { createEventHub, HubPublishError } from '../src/index';
import { isRedisStoreError, type RedisStoreError, redisStreams } from '../src/redis/index';
import { guardProcess, within } from './adversarial/harness';
import { until } from './helpers';
import { streamKey as key, redisInstances } from './redis-helpers';

guardProcess();

interface Node {
  redis: RedisServer;
  admin: Redis;
  id: string;
}

async function clusterNode(): Promise<Node> {
  const redis = await startRedis();
  await redis.stop();
  await redis.start({ args: ['--cluster-enabled', 'yes'] });
  const admin = new Redis(redis.url);
  const id = (await admin.cluster('MYID')) as string;
  return { redis, admin, id };
}

async function poll(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; !(await check()); i++) {
    if (i > 2000) throw new Error(`${what}: not reached`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const nodes: Node[] = [];
/** A cluster node that serves no slot (never joined a cluster). */
let lone: Node;
/** Two nodes of one cluster: `a` serves every slot but those moved to `b`. */
let a: Node;
let b: Node;
beforeAll(async () => {
  [lone, a, b] = await Promise.all([clusterNode(), clusterNode(), clusterNode()]);
  nodes.push(lone, a, b);
  await a.admin.cluster('MEET', '127.0.0.1', String(b.redis.port));
  const knows = async (x: Node, y: Node) => {
    const line = ((await x.admin.cluster('NODES')) as string)
      .split('\n')
      .find((l) => l.startsWith(y.id));
    return line !== undefined && !/handshake|noaddr|fail/.test(line) && / connected/.test(line);
  };
  await poll(async () => (await knows(a, b)) && (await knows(b, a)), 'the nodes meet');
  await a.admin.cluster('ADDSLOTSRANGE', 0, 16383);
  // A master refuses queries for a moment after it starts (CLUSTERDOWN): until its state is ok.
  const ok = async (x: Node) => /cluster_state:ok/.test((await x.admin.cluster('INFO')) as string);
  await poll(async () => (await ok(a)) && (await ok(b)), 'the cluster state is ok');
}, 30_000);
afterAll(async () => {
  for (const n of nodes) n.admin.disconnect();
  await Promise.all(nodes.map((n) => n.redis.dispose()));
});

const warnings: Error[] = [];
const onWarning = (w: Error): void => void warnings.push(w);
afterEach(() => {
  process.off('warning', onWarning);
  warnings.length = 0;
});

/**
 * Moves the hash slot of `stream` (and the stream) from node `from` to node `to`, as a
 * resharding does: IMPORTING / MIGRATING, MIGRATE, then the new owner set on both.
 */
async function moveSlot(stream: string, from: Node, to: Node): Promise<number> {
  const slot = (await from.admin.cluster('KEYSLOT', stream)) as number;
  await to.admin.cluster('SETSLOT', slot, 'IMPORTING', from.id);
  await from.admin.cluster('SETSLOT', slot, 'MIGRATING', to.id);
  if ((await from.admin.exists(stream)) === 1) {
    await from.admin.migrate('127.0.0.1', to.redis.port, stream, 0, 5000);
  }
  await to.admin.cluster('SETSLOT', slot, 'NODE', to.id);
  await from.admin.cluster('SETSLOT', slot, 'NODE', to.id);
  return slot;
}

async function failsToOpen(url: string, stream: string): Promise<RedisStoreError> {
  const errors: unknown[] = [];
  process.on('warning', onWarning);
  const hub = createEventHub({
    store: redisStreams({
      url,
      stream,
      onError: (error) => void errors.push(error),
      reconnect: { initialDelay: 5, maxDelay: 10 },
    }),
  });
  const error = await within(
    hub.ready.then(
      () => null,
      (e: unknown) => e,
    ),
    3000,
    'hub.ready',
  );
  expect(isRedisStoreError(error), String(error)).toBe(true);
  const publish = await hub.publish('n', 'x').then(
    () => null,
    (e: unknown) => e,
  );
  expect(publish).toBeInstanceOf(HubPublishError);
  expect((publish as HubPublishError).cause).toBe(error);
  await new Promise((r) => setTimeout(r, 100));
  // Not retried, not given to onError: `hub.ready` says it, and the hub's one warning.
  expect(errors.map(String)).toEqual([]);
  await hub.close();
  expect(warnings.map(String)).toEqual([expect.stringMatching(/store failed to open/)]);
  expect(String(warnings[0])).toContain((error as Error).message);
  const failure = error as RedisStoreError;
  expect(failure.code).toBe('CLUSTER');
  expect(failure.message).toMatch(/does not follow Redis Cluster redirects/);
  expect(failure.message).toMatch(/standalone Redis/);
  expect(failure.message).toContain(`CLUSTER KEYSLOT ${stream}`);
  expect(failure.message).toMatch(/not retried$/);
  return failure;
}

describe('redisStreams at open on a cluster node that does not serve the stream', () => {
  it('a node serving no slot (CLUSTERDOWN): hub.ready rejects, not retried', async () => {
    expect(await lone.admin.info('server')).toMatch(/redis_mode:cluster/);
    const failure = await failsToOpen(lone.redis.url, key());
    expect(failure.message).toMatch(/CLUSTERDOWN/);
    expect(failure.message).toContain(lone.redis.url);
  });

  it('the stream on another node (MOVED): hub.ready rejects naming the node, not retried', async () => {
    const stream = key();
    await a.admin.xadd(stream, '*', 'e', 'n', 'd', 'before');
    const slot = await moveSlot(stream, a, b);
    const failure = await failsToOpen(a.redis.url, stream);
    expect(failure.message).toContain(`MOVED ${slot} 127.0.0.1:${b.redis.port}`);
    expect(failure.message).toContain(a.redis.url);
    // The node that serves it: the store opens there and works.
    const hub = createEventHub({ store: redisStreams({ url: b.redis.url, stream }) });
    try {
      await within(hub.ready, 3000, 'hub.ready on the node serving the slot');
      const id = await hub.publish('n', 'on b');
      const entries = (await b.admin.xrange(stream, '-', '+')) as [string, string[]][];
      expect(entries.map(([i]) => i)).toContain(id);
    } finally {
      await hub.close();
    }
  });
});

describe('redisStreams after open: the stream moved to another node', () => {
  const live = redisInstances();
  it('reported once (CLUSTER), publishes reject with it; the slot back, it works again', async () => {
    const stream = key();
    const errors: unknown[] = [];
    const instance = await live.instance(stream, {
      url: a.redis.url,
      onError: (e) => void errors.push(e),
      reconnect: { initialDelay: 1, maxDelay: 20 },
    });
    const client = await instance.connect();
    await until(() => instance.hub.size === 1);
    await instance.hub.publish('n', 'before');
    await client.waitFor(1);

    const slot = await moveSlot(stream, a, b);
    await until(() => errors.length > 0, 5000);
    const moved = await a.admin.cluster('COUNTKEYSINSLOT', slot);
    expect(moved).toBe(0);
    const publish = await instance.hub.publish('n', 'x').then(
      () => null,
      (e: unknown) => e,
    );
    expect(publish).toBeInstanceOf(HubPublishError);
    const cause = (publish as HubPublishError).cause;
    expect(isRedisStoreError(cause), String(cause)).toBe(true);
    expect((cause as RedisStoreError).code).toBe('CLUSTER');
    expect((cause as RedisStoreError).message).toContain(`MOVED ${slot} 127.0.0.1:${b.redis.port}`);
    // Many refused reads (backoff to 20 ms) meanwhile: still one report, the typed one.
    await new Promise((r) => setTimeout(r, 200));
    expect(errors).toHaveLength(1);
    const told = errors[0] as RedisStoreError;
    expect(isRedisStoreError(told), String(told)).toBe(true);
    expect(told.code).toBe('CLUSTER');
    expect(told.message).toMatch(/does not follow Redis Cluster redirects/);
    expect(told.message).toMatch(/retrying$/);
    expect(client.events.map((e) => e.data)).toEqual(['before']);

    // The slot (and the stream) back on the node the store uses: it reads and publishes again.
    await moveSlot(stream, b, a);
    let id: string | null = null;
    for (let i = 0; id === null; i++) {
      expect(i).toBeLessThan(1000);
      id = await instance.hub.publish('n', 'after').catch(() => null);
      if (id === null) await new Promise((r) => setTimeout(r, 5));
    }
    await client.waitFor(2);
    expect(client.events.map((e) => e.data)).toEqual(['before', 'after']);
    expect(client.events[1]!.id).toBe(id);
    expect(errors).toHaveLength(1);
  }, 30_000);
});
