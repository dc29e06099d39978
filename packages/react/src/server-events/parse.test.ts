// @vitest-environment node
import { createParser } from 'eventsource-parser';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { sseParser } from './parse';

type Seen =
  | ['event', string | undefined, string, string | undefined]
  | ['retry', number]
  | ['comment'];

function ours(chunks: string[]): Seen[] {
  const seen: Seen[] = [];
  const feed = sseParser(
    {
      onEvent: (m) => seen.push(['event', m.event, m.data, m.id]),
      onRetry: (ms) => seen.push(['retry', ms]),
      onComment: () => seen.push(['comment']),
      onOverflow: () => {
        throw new Error('no limit was set');
      },
    },
    Infinity,
  );
  for (const chunk of chunks) feed(chunk);
  return seen;
}

/** The reference: eventsource-parser, the library this parser replaced (a dev dependency now). */
function reference(chunks: string[]): Seen[] {
  const seen: Seen[] = [];
  const parser = createParser({
    onEvent: (m) => seen.push(['event', m.event, m.data, m.id]),
    onRetry: (ms) => seen.push(['retry', ms]),
    onComment: () => seen.push(['comment']),
  });
  for (const chunk of chunks) parser.feed(chunk);
  return seen;
}

/** A seeded generator (mulberry32), so a failure replays. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const LINES = [
  'data: {"a":1}',
  'data:x',
  'data',
  'data:  two spaces',
  'data: with: colon',
  'event: todo-added',
  'event:',
  'event',
  'id: 7',
  'id:',
  'id: a\0b',
  'retry: 1500',
  'retry: 15x',
  'retry:',
  ': keep-alive',
  ':',
  'unknown: field',
  'nocolon',
  '',
  '',
];
const ENDS = ['\n', '\r', '\r\n'];

describe('sseParser', () => {
  it('reads what eventsource-parser reads, however the stream is cut into chunks', () => {
    for (let seed = 1; seed <= 400; seed++) {
      const rand = random(seed);
      const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
      let stream = '';
      const lines = 1 + Math.floor(rand() * 30);
      for (let i = 0; i < lines; i++) stream += pick(LINES) + pick(ENDS);
      const chunks: string[] = [];
      for (let at = 0; at < stream.length; ) {
        const size = 1 + Math.floor(rand() * 12);
        chunks.push(stream.slice(at, at + size));
        at += size;
      }
      // eventsource-parser holds a line ended by a CR that ends a chunk until a LF comes
      // (sseParser does not: see below); one more LF settles it for both (a CRLF, or a line end).
      chunks.push('\n');
      expect(ours(chunks), `seed ${seed}: ${JSON.stringify(chunks)}`).toEqual(reference(chunks));
    }
  });

  it('dispatches a block at its blank line, with its own fields only', () => {
    expect(ours(['id: 1\nevent: a\ndata: x\ndata: y\n\ndata: z\r\n\r\n'])).toEqual([
      ['event', 'a', 'x\ny', '1'],
      ['event', undefined, 'z', undefined],
    ]);
  });

  it('waits for the LF after a CR that ends a chunk (one line end, not two)', () => {
    expect(ours(['data: a\r', '\ndata: b\r', '\n\r', '\n'])).toEqual([
      ['event', undefined, 'a\nb', undefined],
    ]);
  });

  it('a CR ending a chunk ends its line at once: a block closed by CR CR is dispatched without waiting for more bytes', () => {
    // Holding the last CR until the next chunk (it may be half a CRLF) left the event waiting
    // for the server's next write, a keep-alive perhaps seconds later.
    expect(ours(['data: a\r\r'])).toEqual([['event', undefined, 'a', undefined]]);
    expect(ours(['data: a\r', '\r'])).toEqual([['event', undefined, 'a', undefined]]);
  });

  it('drops a block the stream ends inside of', () => {
    expect(ours(['data: a\n'])).toEqual([]);
  });

  it('reads each character of the stream once, however long a line runs over chunks', () => {
    // Rescanning the unfinished line at each chunk made a large event quadratic: an 8 MB event
    // in 16 KB chunks scanned 2 GB of text and blocked the page for seconds.
    let scanned = 0;
    const exec = RegExp.prototype.exec;
    vi.spyOn(RegExp.prototype, 'exec').mockImplementation(function (this: RegExp, text: string) {
      const from = this.global ? this.lastIndex : 0;
      const found = exec.call(this, text);
      scanned += (found === null ? text.length : found.index + found[0].length) - from;
      return found;
    });
    onTestFinished(() => {
      vi.restoreAllMocks();
    });
    const chunk = 'x'.repeat(1024);
    const chunks = ['data: ', ...Array.from({ length: 1024 }, () => chunk), '\n\n'];
    const seen = ours(chunks);
    vi.restoreAllMocks();
    expect(seen).toEqual([['event', undefined, 'x'.repeat(1024 * 1024), undefined]]);
    expect(scanned).toBeLessThanOrEqual(1024 * 1024 + 8);
  });

  it('an event over the limit calls onOverflow, whether one line never ends, data lines never close the block, or it came whole in one chunk', () => {
    const overflowed = (chunks: string[]) => {
      let overflows = 0;
      const events: string[] = [];
      const feed = sseParser(
        {
          onEvent: (m) => events.push(m.data),
          onRetry: () => {},
          onOverflow: () => {
            overflows++;
          },
        },
        100,
      );
      for (const chunk of chunks) feed(chunk);
      return { overflows, events };
    };
    // Exactly at the limit is allowed; one character more is not.
    expect(overflowed(['data: ', 'x'.repeat(94)]).overflows).toBe(0);
    expect(overflowed(['data: ', 'x'.repeat(95)]).overflows).toBe(1);
    // A stream with no line end at all.
    expect(overflowed(Array.from({ length: 50 }, () => 'xxxxxxxxxx')).overflows).toBeGreaterThan(0);
    // Ended lines, but a block that never ends: its data lines add up.
    expect(overflowed(Array.from({ length: 50 }, () => 'data: xxxx\n')).overflows).toBeGreaterThan(
      0,
    );
    // A whole event over the limit in one chunk (or ended in the chunk that overran): caught
    // before it is dispatched, as when it arrives in pieces. It was checked only across chunks.
    const order: string[] = [];
    const feed = sseParser(
      {
        onEvent: () => order.push('event'),
        onRetry: () => {},
        onOverflow: () => order.push('overflow'),
      },
      100,
    );
    feed(`data: ${'x'.repeat(200)}\n\n`);
    expect(order[0]).toBe('overflow');
    expect(overflowed([`data: ${'x'.repeat(60)}\ndata: ${'x'.repeat(60)}\n\n`]).overflows).toBe(1);
    expect(overflowed([`data: ${'x'.repeat(94)}\n\n`]).overflows).toBe(0);
    // Many events, each under the limit: the limit is per event, not per stream.
    const many = overflowed(Array.from({ length: 50 }, () => `data: ${'x'.repeat(80)}\n\n`));
    expect(many).toEqual({
      overflows: 0,
      events: Array.from({ length: 50 }, () => 'x'.repeat(80)),
    });
  });
});
