// The store does not follow Redis Cluster redirects: on a cluster node that does not serve the
// stream's hash slot, every command on the key is answered `MOVED <slot> <host:port>` or `ASK`
// (another node does), which retrying cannot fix: at open `hub.ready` rejects with a
// RedisStoreError (`CLUSTER`) saying so, once, with no onError call. `CLUSTERDOWN` (the cluster
// down, a failover under way, no node assigned the slot yet) and `TRYAGAIN` (the slot moving)
// can pass while the app waits: at open they are retried with the store's backoff (its clock)
// and reported once, `hub.ready` resolving once the node serves the slot (they used to fail it
// for good, so a failover during a rolling deploy failed every instance it started). After open
// (the slot moved away), a cluster answer is reported once, publishes reject with it as cause,
// and the store retries: the slot back, it reads and publishes again. Real redis-servers
// started with `--cluster-enabled yes` (each one's nodes.conf in its dir); the down cluster is a
// node whose slots are assigned (`CLUSTER ADDSLOTSRANGE`) only after the store tried to open.
import { Redis, ReplyError } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEventHub, HubPublishError } from '../src/index';
import { clusterDown, permanentFailure } from '../src/redis/errors';
import { isRedisStoreError, type RedisStoreError, redisStreams } from '../src/redis/index';
import { guardProcess, within } from './adversarial/harness';
import { ManualClock, until } from './helpers';
import {
  failedOpen,
  streamKey as key,
  type RedisServer,
  redisInstances,
  startRedis,
} from './redis-helpers';

guardProcess();

interface Node {
  redis: RedisServer;
  admin: Redis;
  id: string;
}

async function clusterNode(): Promise<Node> {
  const redis = await startRedis({ cluster: true });
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
/** Two nodes of one cluster: `a` serves every slot but those moved to `b`. */
let a: Node;
let b: Node;
beforeAll(async () => {
  [a, b] = await Promise.all([clusterNode(), clusterNode()]);
  nodes.push(a, b);
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

/** See `failedOpen`; also: the hub's one warning, naming the CLUSTER refusal. */
async function failsToOpen(url: string, stream: string): Promise<RedisStoreError> {
  const { error: failure, warnings: seen } = await failedOpen({ url, stream });
  expect(seen).toEqual([expect.stringMatching(/store failed to open/)]);
  expect(seen[0]).toContain(failure.message);
  expect(failure.code).toBe('CLUSTER');
  expect(failure.message).toMatch(/does not follow Redis Cluster redirects/);
  expect(failure.message).toMatch(/standalone Redis/);
  expect(failure.message).toContain(`CLUSTER KEYSLOT ${stream}`);
  expect(failure.message).toMatch(/not retried$/);
  return failure;
}

describe('redisStreams at open on a cluster node that does not serve the stream', () => {
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

describe('redisStreams at open on a cluster that is down (CLUSTERDOWN)', () => {
  // A node of a cluster whose slots are not assigned yet answers every command on a key with
  // `CLUSTERDOWN`, as one does while a failover is under way: the open waits for the cluster.
  it('retried with the backoff (the clock), reported once; ready once the slot is served', async () => {
    const node = await clusterNode();
    nodes.push(node);
    const stream = key();
    const clock = new ManualClock();
    const errors: unknown[] = [];
    const hub = createEventHub({
      store: redisStreams({
        url: node.redis.url,
        stream,
        clock,
        onError: (e) => void errors.push(e),
        reconnect: { initialDelay: 100, maxDelay: 400 },
      }),
    });
    let settled: string | null = null;
    hub.ready.then(
      () => (settled = 'ready'),
      (e: unknown) => (settled = String(e)),
    );
    try {
      // MULTI opens each attempt's transaction (not a key command: a down cluster runs it).
      const attempts = async () => {
        const info = (await node.admin.info('commandstats')) as string;
        return Number(/cmdstat_multi:calls=(\d+)/.exec(info)?.[1] ?? 0);
      };
      await until(() => errors.length > 0 || settled !== null, 5000);
      expect(settled).toBe(null);
      expect(errors).toHaveLength(1);
      const told = errors[0] as RedisStoreError;
      expect(isRedisStoreError(told), String(told)).toBe(true);
      expect(told.code).toBe('CLUSTER');
      expect(told.message).toMatch(/CLUSTERDOWN/);
      expect(told.message).toContain(`CLUSTER KEYSLOT ${stream}`);
      expect(told.message).toMatch(/retrying$/);
      // The next attempt waits for the backoff on the store's clock: none before it is due.
      await until(() => clock.active === 1, 5000);
      const first = await attempts();
      await new Promise((r) => setTimeout(r, 50));
      expect(await attempts()).toBe(first);
      clock.tick(99);
      await new Promise((r) => setTimeout(r, 50));
      expect(await attempts()).toBe(first);
      clock.tick(1);
      await poll(async () => (await attempts()) > first, 'the second attempt');
      // Still refused: the condition was told once, and the wait doubles (200 ms).
      await until(() => clock.active === 1, 5000);
      expect(errors).toHaveLength(1);
      expect(settled).toBe(null);
      const publish = await hub.publish('n', 'x').then(
        () => null,
        (e: unknown) => e,
      );
      expect(publish).toBeInstanceOf(HubPublishError);

      // The cluster comes up: this node serves every slot.
      await node.admin.cluster('ADDSLOTSRANGE', 0, 16383);
      const ok = async () => /cluster_state:ok/.test((await node.admin.cluster('INFO')) as string);
      await poll(ok, 'the cluster state is ok');
      clock.tick(199);
      await new Promise((r) => setTimeout(r, 50));
      expect(settled).toBe(null);
      clock.tick(1);
      await within(hub.ready, 3000, 'hub.ready');
      expect(settled).toBe('ready');
      const id = await hub.publish('n', 'up');
      const entries = (await node.admin.xrange(stream, '-', '+')) as [string, string[]][];
      expect(entries.map(([i]) => i)).toEqual([id]);
      expect(errors).toHaveLength(1);
    } finally {
      await hub.close();
    }
    expect(clock.active).toBe(0);
  }, 30_000);
  it('without onError: one process warning, then one when it reads; no failed open', async () => {
    const node = await clusterNode();
    nodes.push(node);
    const stream = key();
    process.on('warning', onWarning);
    const hub = createEventHub({
      store: redisStreams({
        url: node.redis.url,
        stream,
        reconnect: { initialDelay: 5, maxDelay: 10 },
      }),
    });
    try {
      await until(() => warnings.length > 0, 5000);
      // Many attempts (backoff to 10 ms) meanwhile.
      await new Promise((r) => setTimeout(r, 200));
      expect(warnings.map(String)).toEqual([expect.stringMatching(/CLUSTERDOWN.*retrying$/)]);
      await node.admin.cluster('ADDSLOTSRANGE', 0, 16383);
      await within(hub.ready, 5000, 'hub.ready');
      await hub.publish('n', 'up');
      expect(warnings.map(String)).toEqual([
        expect.stringMatching(/CLUSTERDOWN.*retrying$/),
        expect.stringMatching(new RegExp(`reads ${stream} from .* again$`)),
      ]);
    } finally {
      await hub.close();
    }
  }, 30_000);

  it('TRYAGAIN (a slot moving, multi-key) is waited for as CLUSTERDOWN is; MOVED and ASK are not', () => {
    expect(
      clusterDown(new ReplyError('TRYAGAIN Multiple keys request during rehashing of slot')),
    ).toBe(true);
    expect(
      permanentFailure(new ReplyError('TRYAGAIN Multiple keys request during rehashing of slot')),
    ).toBe('CLUSTER');
    expect(clusterDown(new ReplyError('CLUSTERDOWN Hash slot not served'))).toBe(true);
    expect(clusterDown(new ReplyError('MOVED 1 127.0.0.1:1'))).toBe(false);
    expect(clusterDown(new ReplyError('ASK 1 127.0.0.1:1'))).toBe(false);
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
