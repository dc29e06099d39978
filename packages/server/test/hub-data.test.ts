// Data that JSON cannot hold (a BigInt, a cycle, a throwing toJSON, a function), published through
// the hub or sent with ctx.sseEvent: a TypeError naming the event (and topic) and what was wrong,
// thrown before anything is stored or written; the stream and the hub go on.
import { describe, expect, it } from 'vitest';
import { createEventHub } from '../src/index';
import { guardProcess } from './adversarial/harness';
import { sse, start, trackApps, until } from './helpers';

guardProcess();

// Closing an app ends its streams (and their clients).
const make = trackApps();

const cycle: Record<string, unknown> = { name: 'loop' };
cycle.self = cycle;
const BAD: [string, unknown, RegExp][] = [
  ['a BigInt', 10n, /BigInt/],
  ['a BigInt inside', { total: 10n }, /BigInt/],
  ['a cycle', cycle, /circular/i],
  [
    'a throwing toJSON',
    {
      toJSON() {
        throw new Error('no JSON for you');
      },
    },
    /no JSON for you/,
  ],
  ['a function', () => 1, /a function/],
  ['a symbol', Symbol('s'), /a symbol/],
];

describe('hub.publish with data JSON cannot hold', () => {
  it.each(BAD)(
    '%s: a TypeError naming the event and topic; nothing is stored or sent',
    async (_, data, why) => {
      const app = make();
      const hub = createEventHub();
      app.get('/events', (ctx) => hub.connect(ctx, { topics: ['team:1'] }));
      const { port } = await start(app);
      const client = await sse(port, '/events');
      await until(() => hub.size === 1);
      const before = hub.lastId;
      let thrown: unknown;
      try {
        await hub.publish('total', data, { topic: 'team:1' });
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(TypeError);
      const message = (thrown as Error).message;
      expect(message).toMatch(/^keel: `data` of event "total" \(topic "team:1"\) must be /);
      expect(message).toMatch(why);
      expect(message).not.toMatch(/\n/);
      expect(hub.metrics.published).toBe(0);
      expect(hub.lastId).toBe(before);
      // The hub goes on: the next event is the first the client gets, with the next id.
      const id = await hub.publish('total', { ok: true }, { topic: 'team:1' });
      await client.waitFor(1);
      expect(client.events).toEqual([{ id, event: 'total', data: '{"ok":true}' }]);
      expect(id.endsWith('-1')).toBe(true);
    },
  );

  it('a broadcast names no topic; undefined data is still an empty event', async () => {
    const hub = createEventHub();
    // Thrown at once, like a bad event name.
    expect(() => hub.publish('n', 1n)).toThrow(
      /^keel: `data` of event "n" must be a string or JSON-serializable/,
    );
    await expect(hub.publish('n', undefined)).resolves.toMatch(/-1$/);
  });
});

describe('ctx.sseEvent with data JSON cannot hold', () => {
  it('a TypeError naming the event reaches onError; nothing is written, the stream goes on', async () => {
    const app = make();
    const errors: unknown[] = [];
    app.onError((err) => void errors.push(err));
    let sent = false;
    app.get('/s', (ctx) => {
      try {
        ctx.sseEvent('total', { total: 10n });
      } catch (err) {
        errors.push(err);
      }
      sent = ctx.sseEvent('total', { ok: true });
      const stream = ctx.sseStream();
      setTimeout(() => stream.close(), 20);
      return stream;
    });
    const { port } = await start(app);
    const client = await sse(port, '/s');
    await client.ended;
    expect(sent).toBe(true);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(TypeError);
    expect((errors[0] as Error).message).toMatch(/^keel: `data` of event "total" must be .*BigInt/);
    expect(client.events).toEqual([{ id: '1', event: 'total', data: '{"ok":true}' }]);
  });
});

describe('ctx.sseInterval whose fn returns data JSON cannot hold', () => {
  let ticks = 0;
  it.each([
    ['sync', () => ({ n: 1n })],
    ['async', async () => ({ n: 1n })],
    // Fine at first: the bad value comes from a timer tick, not from inside the handler.
    ['sync, on a later tick', () => (++ticks === 1 ? { n: 1 } : { n: 1n })],
  ])('%s: the TypeError goes to onError and the stream ends; no uncaught error', async (_, fn) => {
    const app = make();
    const errors: unknown[] = [];
    app.onError((err) => void errors.push(err));
    app.get('/tick', (ctx) => ctx.sseInterval(fn, 10));
    const { port } = await start(app);
    const client = await sse(port, '/tick');
    await client.ended;
    await until(() => errors.length === 1);
    expect(errors[0]).toBeInstanceOf(TypeError);
    expect((errors[0] as Error).message).toMatch(
      /^keel: `data` of an unnamed event must be .*BigInt/,
    );
    expect(client.events.length).toBeLessThanOrEqual(1);
  });
});

describe('ctx.sseEvent as the first write', () => {
  it('data JSON cannot hold is a 500 through onError, not a 200 stream cut short', async () => {
    const app = make();
    const errors: unknown[] = [];
    app.onError((err) => void errors.push(err));
    app.get('/s', (ctx) => ctx.sseEvent('total', { total: 10n }));
    const res = await app.inject({ url: '/s' });
    expect(res.status).toBe(500);
    expect(res.headers['content-type']).not.toMatch(/event-stream/);
    expect(errors[0]).toBeInstanceOf(TypeError);
  });
});
