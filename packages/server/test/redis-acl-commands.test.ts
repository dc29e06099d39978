// The commands the store sends, one ACL rule each (`ACL_RULES`): a Redis user refused one it
// cannot do without fails `hub.ready` (or, for XADD, each publish) with a NOPERM RedisStoreError
// whose advice lists every rule, the same list the README gives; one refused that it can do
// without (INFO, CONFIG GET, CLIENT ...) opens and delivers, with nothing reported. Each refused
// in turn, on a real redis-server with an ACL user per command, on db 1 (so SELECT is sent).
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, createEventHub, type EventHub, HubPublishError } from '../src/index';
import { ACL_RULES, NEEDED_RULES, OPTIONAL_RULES } from '../src/redis/errors';
import { isRedisStoreError, redisStreams } from '../src/redis/index';
import { guardProcess, within } from './adversarial/harness';
import { type SseClient, sse, start, until } from './helpers';
import { failedOpen, streamKey as key, redisServer } from './redis-helpers';

guardProcess();
const server = redisServer();
const hubs: EventHub[] = [];
const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  await Promise.all(hubs.splice(0).map((h) => h.close()));
});

/** A user allowed everything but `rule` (`xinfo|stream`, `client|setname`, ...), on db 1. */
async function userWithout(rule: string): Promise<string> {
  const name = `no-${rule.replace('|', '-')}`;
  const { admin } = server;
  await admin.call('ACL', 'SETUSER', name, 'reset', 'on', '>pw', '~*', '&*', '+@all', `-${rule}`);
  return `${server.redis.url.replace('//', `//${name}:pw@`)}/1`;
}

/** A hub on `url` with its onError calls and the process warnings while it runs. */
function hubOn(url: string) {
  const errors: unknown[] = [];
  const warnings: string[] = [];
  const onWarning = (w: Error): void => void warnings.push(String(w));
  process.on('warning', onWarning);
  closers.push(() => process.off('warning', onWarning));
  const hub = createEventHub({
    store: redisStreams({
      url,
      stream: key(),
      onError: (e) => void errors.push(e),
      reconnect: { initialDelay: 5, maxDelay: 10 },
    }),
  });
  hubs.push(hub);
  return { hub, errors, warnings };
}

/** The NOPERM advice: every rule, in the store's order. */
function expectAdvice(message: string): void {
  expect(message).toContain(ACL_RULES);
  for (const rule of [...NEEDED_RULES, ...OPTIONAL_RULES]) expect(message).toContain(rule);
}

describe('redisStreams: the commands it sends (ACL)', () => {
  it('the README lists the same rules as the NOPERM advice', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    expect(readme).toContain(ACL_RULES);
  });

  // XADD is checked by a publish (it cannot be tried at open without writing).
  for (const rule of NEEDED_RULES.filter((r) => r !== '+xadd')) {
    const command = rule.slice(1);
    it(`refused ${command}: hub.ready rejects with NOPERM, advice listing every rule`, async () => {
      const { error } = await failedOpen({ url: await userWithout(command) });
      expect(error.code).toBe('NOPERM');
      expect(error.message).toContain(`'${command}'`);
      expectAdvice(error.message);
    });
  }

  it('refused xadd: opens, each publish rejects with NOPERM, advice listing every rule', async () => {
    const { hub, errors } = hubOn(await userWithout('xadd'));
    await within(hub.ready, 3000, 'hub.ready');
    const error = await hub.publish('n', 'x').then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(HubPublishError);
    const cause = (error as HubPublishError).cause;
    expect(isRedisStoreError(cause) && cause.code, String(cause)).toBe('NOPERM');
    expectAdvice((cause as Error).message);
    // A publish reports by rejecting, not to onError.
    expect(errors).toEqual([]);
  });

  for (const rule of OPTIONAL_RULES) {
    const command = rule.slice(1);
    it(`refused ${command}: opens and delivers, nothing reported`, async () => {
      const { hub, errors, warnings } = hubOn(await userWithout(command));
      const app = createApp();
      app.get('/events', (ctx) => hub.connect(ctx));
      const { port } = await start(app);
      closers.push(() => app.close());
      await within(hub.ready, 3000, 'hub.ready');
      const client: SseClient = await sse(port, '/events');
      closers.push(() => client.close());
      await until(() => hub.size === 1);
      const id = await hub.publish('n', 'x');
      await until(() => client.events.some((e) => e.id === id));
      expect(errors).toEqual([]);
      expect(warnings).toEqual([]);
    });
  }
});
