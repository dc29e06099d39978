import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../test/helpers';
import { formatEvent, openSseStream, SseRegistry, streamEvery } from './sse';

describe('formatEvent', () => {
  it('frames ids, names and multi-line data', () => {
    expect(formatEvent('tick', { a: 1 }, '7')).toBe('id: 7\nevent: tick\ndata: {"a":1}\n\n');
    expect(formatEvent(undefined, 'a\nb\r\nc\rd', undefined)).toBe(
      'data: a\ndata: b\ndata: c\ndata: d\n\n',
    );
    expect(formatEvent('x', '', '1')).toBe('id: 1\nevent: x\ndata: \n\n');
  });

  it('rejects CR, LF and NUL in event names and ids', () => {
    expect(() => formatEvent('a\nb', 1, '1')).toThrow(RangeError);
    expect(() => formatEvent('a\rdata: injected', 1, '1')).toThrow(RangeError);
    expect(() => formatEvent('a', 1, '1\n')).toThrow(RangeError);
    expect(() => formatEvent('a', 1, '1\0')).toThrow(RangeError);
  });

  it('rejects a lone surrogate in event names and ids, naming the field; pairs pass', () => {
    expect(() => formatEvent('a\uD800', 1, '1')).toThrow(/`event` must be .*no lone surrogate/);
    expect(() => formatEvent('a', 1, '1\uDFFF')).toThrow(/`id` must be .*no lone surrogate/);
    expect(() => formatEvent('\uDC00\uD800', 1, undefined)).toThrow(RangeError);
    expect(formatEvent('\u{1F600}', 1, '\u{1F600}')).toBe(
      'id: \u{1F600}\nevent: \u{1F600}\ndata: 1\n\n',
    );
  });
});

/** A response double whose socket buffer the test controls. */
class FakeRes extends EventEmitter {
  writableLength = 0;
  writableNeedDrain = false;
  written: string[] = [];
  destroyed = false;
  ended = false;
  writeHead() {
    return this;
  }
  flushHeaders() {}
  write(chunk: string | Buffer) {
    this.written.push(chunk.toString());
    this.writableLength += chunk.length;
    return !this.writableNeedDrain;
  }
  end() {
    this.ended = true;
    this.emit('close');
  }
  destroy() {
    this.destroyed = true;
    this.emit('close');
  }
}

describe('backpressure', () => {
  function open(maxBufferedBytes = 1000) {
    const clock = new ManualClock();
    const registry = new SseRegistry(clock, { heartbeatMs: 0, maxBufferedBytes });
    const res = new FakeRes();
    const stream = openSseStream(res as unknown as ServerResponse, registry, [], (err) => {
      throw err;
    });
    return { clock, registry, res, stream };
  }

  it('skips interval ticks while the socket is congested', () => {
    const { clock, res, stream } = open();
    let calls = 0;
    void streamEvery(
      stream,
      () => ++calls,
      100,
      () => {},
    );
    expect(calls).toBe(1);
    res.writableNeedDrain = true;
    clock.tick(500);
    expect(calls).toBe(1);
    res.writableNeedDrain = false;
    clock.tick(100);
    expect(calls).toBe(2);
    stream.close();
    expect(clock.active).toBe(0);
  });

  it('skips ticks while an async fn is pending', async () => {
    const { clock, stream, res } = open();
    let resolve!: (v: unknown) => void;
    let calls = 0;
    void streamEvery(
      stream,
      () => {
        calls++;
        return new Promise((r) => {
          resolve = r;
        });
      },
      100,
      () => {},
    );
    clock.tick(300);
    expect(calls).toBe(1);
    resolve('done');
    await Promise.resolve();
    await Promise.resolve();
    expect(res.written.some((w) => w.includes('data: done'))).toBe(true);
    clock.tick(100);
    expect(calls).toBe(2);
    stream.close();
  });

  it('disconnects a client that left more than maxBufferedBytes unsent', async () => {
    const { res, stream, registry } = open(1000);
    // Bytes of the current turn are held by Node's cork, not unsent: no drop within one turn.
    expect(stream.send('a', 'x'.repeat(700))).toBe(true);
    expect(stream.send('a', 'x'.repeat(700))).toBe(true);
    expect(res.destroyed).toBe(false);
    await new Promise((r) => setImmediate(r));
    expect(stream.send('a', 'x'.repeat(10))).toBe(false);
    expect(res.destroyed).toBe(true);
    expect(stream.closed).toBe(true);
    expect(registry.streams.size).toBe(0);
    expect(stream.send('a', 1)).toBe(false);
  });
});
