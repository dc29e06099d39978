import { randomBytes } from 'node:crypto';
import { checkOptions, integer, keysOf } from './checks';
import {
  bufferBytesOption,
  EventRing,
  type IdOrder,
  MAX_BUFFER_SIZE,
  REPLAY_RESET,
} from './hub-ring';
import type { HubStore, StoredEvent, StoreSink } from './hub-store';

/** Options for {@link memoryStore}. */
export interface MemoryStoreOptions {
  /**
   * Events kept for `Last-Event-ID` replay.
   * @default 100
   */
  bufferSize?: number | undefined;
  /**
   * The most bytes of those events kept (each counted as its id, name and data lengths plus 21):
   * past it the oldest go, however few, so a few huge events cannot make it hold `bufferSize`
   * times their size. A reconnect from before them gets `keel:reset`.
   * @default 16777216 (16 MiB)
   */
  bufferBytes?: number | undefined;
}

/** `n` of an id `<epoch>-<n>` as the store writes it (no sign, no leading zero, safe integer). */
const SEQ = /^(?:0|[1-9]\d{0,14})$/;

/**
 * The order of `<epoch>-<n>` ids: by `n`, which counts pushes, so the ring finds a held id by
 * its number, without an index. NaN for any other string (another epoch, `01`, `+1`, `1e3`).
 */
function seqOrder(epoch: string): IdOrder {
  const prefix = `${epoch}-`;
  const seqOf = (id: string): number => {
    if (id.length > prefix.length + 15 || !id.startsWith(prefix)) return Number.NaN;
    const n = id.slice(prefix.length);
    return SEQ.test(n) ? Number(n) : Number.NaN;
  };
  return (id, held) => seqOf(id) - seqOf(held);
}

/**
 * The event hub's default store: one process, events in memory. Ids are `<epoch>-<n>`: `n`
 * counts up from 1, and the epoch is random per store, so after a restart (or on another
 * process) an old `Last-Event-ID` is recognised as foreign and answered with `keel:reset`
 * instead of being mistaken for a position in the new sequence.
 *
 * @example
 * const hub = createEventHub({ store: memoryStore({ bufferSize: 500 }) });
 */
const MEMORY_STORE_KEYS = keysOf<MemoryStoreOptions>({ bufferSize: 0, bufferBytes: 0 });

export function memoryStore(options: MemoryStoreOptions = {}): HubStore {
  checkOptions('memoryStore options', options, MEMORY_STORE_KEYS);
  const bufferSize = integer('bufferSize', options.bufferSize, 100, 0, MAX_BUFFER_SIZE, 'events');
  const epoch = randomBytes(4).toString('hex');
  let seq = 0;
  const bufferBytes = bufferBytesOption(options.bufferBytes);
  const ring = new EventRing(bufferSize, `${epoch}-0`, seqOrder(epoch), bufferBytes);
  let sink: StoreSink | null = null;
  return {
    open(target) {
      sink = target;
      return `${epoch}-${seq}`;
    },
    append(event, data, topic) {
      const stored: StoredEvent = { id: `${epoch}-${++seq}`, event, data, topic };
      ring.push(stored);
      sink?.deliver(stored);
      return stored.id;
    },
    replay(request) {
      // Stops once the client's events cannot fit its queue: an old id reads no more than that.
      return ring.between(request.after, request.upTo, request) ?? REPLAY_RESET;
    },
    close() {
      sink = null;
    },
  };
}
