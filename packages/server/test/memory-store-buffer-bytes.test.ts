// The memory store's recent events were bounded by count alone (`bufferSize`): a few huge events
// made it hold up to `bufferSize` times their size. `bufferBytes` (as the Redis store's) bounds
// them in bytes too; a reconnect from before what it still holds gets `keel:reset`.
import { afterEach, describe, expect, it } from 'vitest';
import { createEventHub, memoryStore } from '../src/index';
import { guardProcess } from './adversarial/harness';
import { type SseClient, sse, start, trackApps } from './helpers';
import { hubApp } from './hub-fixture';

guardProcess();
const make = trackApps();
const opened: SseClient[] = [];
afterEach(() => {
  for (const client of opened.splice(0)) client.close();
});

describe('memoryStore({ bufferBytes })', () => {
  it('holds at most that many bytes of recent events; an older id is reset', async () => {
    const { hub, port } = await hubApp(make(), memoryStore({ bufferBytes: 600 }));
    const ids: string[] = [];
    // About 140 bytes each (id, name, 102 bytes of JSON data, 21): 600 bytes hold the last 4.
    for (let i = 0; i < 6; i++) ids.push(await hub.publish('n', `${i}`.repeat(100)));
    const recent = await sse(port, '/events', { 'last-event-id': ids[2]! });
    opened.push(recent);
    await recent.waitFor(3);
    expect(recent.events.map((e) => e.id)).toEqual(ids.slice(3));
    const old = await sse(port, '/events', { 'last-event-id': ids[0]! });
    opened.push(old);
    await old.waitFor(1);
    expect(old.events.map((e) => [e.event, e.id])).toEqual([['keel:reset', ids[5]]]);
  });

  it('is a whole number of bytes, 16 MiB by default', () => {
    for (const bad of [-1, 1.5, '600', null]) {
      expect(() => memoryStore({ bufferBytes: bad as never })).toThrow(/bufferBytes/);
    }
    expect(() => memoryStore({ bufferBytes: 0 })).not.toThrow();
  });
});

describe('createEventHub({ bufferBytes })', () => {
  it('bounds the default memory store in bytes as memoryStore({ bufferBytes }) does', async () => {
    const app = make();
    const hub = createEventHub({ bufferBytes: 600 });
    app.get('/events', (ctx) => hub.connect(ctx));
    const { port } = await start(app);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await hub.publish('n', `${i}`.repeat(100)));
    const old = await sse(port, '/events', { 'last-event-id': ids[0]! });
    opened.push(old);
    await old.waitFor(1);
    expect(old.events.map((e) => [e.event, e.id])).toEqual([['keel:reset', ids[5]]]);
    await hub.close();
  });

  it('checked as memoryStore checks it', () => {
    expect(() => createEventHub({ bufferBytes: -1 })).toThrow(/bufferBytes/);
  });
});
