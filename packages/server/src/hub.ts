import type { Context } from './context';
import { formatEvent, type SseStream } from './sse';

/** Options for {@link createEventHub}. */
export interface EventHubOptions {
  /** Events kept for `Last-Event-ID` replay. Default 100. */
  bufferSize?: number;
}

/** Event name sent to a reconnecting client whose `Last-Event-ID` is older than the buffer. */
export const HUB_RESET_EVENT = 'keel:reset';

/**
 * Fans events out to many SSE clients. Holds streams, never ctx objects, so a recycled ctx can
 * never receive another client's events.
 */
export interface EventHub {
  /**
   * Attaches the request's client: opens its event stream, replays buffered events newer than
   * its `Last-Event-ID` header, and returns the stream once attached. Return it from the handler;
   * the ctx is released when the client disconnects.
   *
   * @example
   * app.get('/events', (ctx) => hub.connect(ctx));
   */
  connect(ctx: Context): SseStream;
  /** Sends a named event to every client; returns its id (1, 2, 3, ...). */
  publish(event: string, data: unknown): number;
  /** Connected clients. */
  readonly size: number;
  /** The id of the last published event (0 before the first). */
  readonly lastId: number;
  /** Ends every stream; later `connect` calls end the new stream at once. */
  close(): void;
}

interface Buffered {
  id: number;
  frame: Buffer;
}

/**
 * Creates an {@link EventHub}.
 *
 * Ids increase by one per publish; the last `bufferSize` events are kept. A client reconnecting
 * with `Last-Event-ID: n` gets every kept event with id > n. When n is older than the oldest kept
 * event (or unknown, e.g. from before a restart), it first gets a `keel:reset` event with
 * `{ "lastEventId": n }`, then everything kept: the client should refetch its state.
 */
export function createEventHub(options: EventHubOptions = {}): EventHub {
  const bufferSize = options.bufferSize ?? 100;
  if (!Number.isInteger(bufferSize) || bufferSize < 0) {
    throw new RangeError(`bufferSize must be a non-negative integer, got ${String(bufferSize)}`);
  }
  // Ring buffer: ring[i % bufferSize] holds event id i + 1 for the last `count` ids.
  const ring: (Buffered | undefined)[] = new Array(bufferSize);
  let count = 0;
  let seq = 0;
  let closed = false;
  const clients = new Set<SseStream>();
  const remove = (stream: SseStream): void => {
    clients.delete(stream);
  };

  function replay(stream: SseStream, header: string | undefined): void {
    if (header === undefined) return;
    const last = /^\d{1,15}$/.test(header.trim()) ? Number(header.trim()) : Number.NaN;
    if (last === seq) return;
    const oldest = seq - count + 1;
    if (!(last >= oldest - 1 && last <= seq)) {
      stream.write(formatEvent(HUB_RESET_EVENT, { lastEventId: header }, undefined));
    }
    const from = last >= oldest - 1 && last <= seq ? last + 1 : oldest;
    for (let id = from; id <= seq; id++) {
      const item = ring[(id - 1) % bufferSize];
      if (item !== undefined && item.id === id && !stream.write(item.frame)) return;
    }
  }

  return {
    connect(ctx) {
      const stream = ctx.sseStream();
      if (closed) {
        stream.close();
        return stream;
      }
      replay(stream, ctx.header('last-event-id'));
      if (!stream.closed) {
        clients.add(stream);
        stream.onClose(remove);
      }
      return stream;
    },
    publish(event, data) {
      // Format (which validates the name) before taking the id, so a bad event leaves no gap.
      const frame = Buffer.from(formatEvent(event, data, String(seq + 1)));
      const id = ++seq;
      if (bufferSize > 0) {
        ring[(id - 1) % bufferSize] = { id, frame };
        if (count < bufferSize) count++;
      }
      for (const stream of clients) stream.write(frame);
      return id;
    },
    get size() {
      return clients.size;
    },
    get lastId() {
      return seq;
    },
    close() {
      closed = true;
      for (const stream of [...clients]) stream.close();
      clients.clear();
    },
  };
}
