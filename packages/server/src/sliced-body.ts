import type { ServerResponse } from 'node:http';
import { isUint8Array } from 'node:util/types';
import { fitsQueue, noop, type SendWatch, watchSend } from './send-watch';

/**
 * Buffered bodies (`json`, `send` of a string or bytes) larger than this are written in slices
 * of it; smaller ones, the hot path, are one `res.end(body)`. A single write of a large body
 * reports no progress until all of it is taken (`socket.bytesWritten` counts it when handed
 * over, `writableLength` drops only when it completes), so `sendTimeout` could not tell a client
 * that stopped reading from a slow one that keeps reading. Slices drain one by one, which is the
 * signal streamed bodies are watched by. A file stream's chunk size.
 */
export const SLICE_BYTES = 64 * 1024;

/**
 * Writes `body` (longer than {@link SLICE_BYTES}; the head is set) and ends `res`, as fast as
 * the client takes it: one chunk through {@link sliceWrites}, whose loop serves streams too. The
 * `sendTimeout` watcher starts only when the write is left waiting, and covers every byte:
 * `res.end()` is called once the last slice was written (its write's callback). If the response
 * closes first (the client left, or took nothing for `sendTimeout`), the body is let go; so it
 * is when it waits behind another response and its connection's queue is full. `done`
 * is called once, right after `res.end()` really ran or when the response closed.
 */
export function endInSlices(
  res: ServerResponse,
  body: string | Uint8Array,
  size: number,
  watch: SendWatch,
  done: () => void,
): void {
  // Closed before a byte was written (a compression that outlived its client): 'close' is gone.
  if (res.destroyed) {
    done();
    return;
  }
  // Queued behind an earlier response of its connection: counted toward the connection's cap,
  // past which the connection is closed and the body let go before it is copied. `size` is its
  // byte length, which the caller measured for Content-Length (no second scan of a string).
  if (!fitsQueue(res, watch, size)) {
    res.destroy();
    done();
    return;
  }
  let unwatch = noop;
  let over = false;
  const stop = (): void => {
    if (over) return;
    over = true;
    res.off('close', stop);
    unwatch();
    unslice();
    done();
  };
  const unslice = sliceWrites(res);
  res.on('close', stop);
  // All of it written: end (nothing of the body is left for `end` to wait behind). With an error
  // when the response closed first: 'close' stops then.
  const written = (err?: Error | null): void => {
    if (err != null || over) return;
    res.end();
    stop();
  };
  // The socket would turn a string into bytes anyway; here once, so slices are views of it.
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  if (!res.write(bytes, written) && !over) unwatch = watchSend(res, watch);
}

/**
 * The length `write`/`end` is sliced by: a string's in code units, bytes' in bytes, 0 for no chunk.
 */
export function sizeOf(chunk: unknown): number {
  return typeof chunk === 'string'
    ? chunk.length
    : chunk instanceof Uint8Array
      ? chunk.byteLength
      : 0;
}

/**
 * Watches a body that a stream or the handler writes to `res`: large writes sliced
 * ({@link sliceWrites}) and its client's progress timed ({@link watchSend}). Returns the function
 * that stops both (call it once the response finished or closed).
 */
export function watchWrites(res: ServerResponse, watch: SendWatch): () => void {
  const unwatch = watchSend(res, watch);
  const unslice = sliceWrites(res);
  return () => {
    unwatch();
    unslice();
  };
}

type WriteCallback = (error?: Error | null) => void;

/** A chunk written while another is sliced, with its write's callback. */
interface Queued {
  data: Uint8Array;
  cb: WriteCallback | undefined;
}

const EMPTY = new Uint8Array(0);

/**
 * Makes `res.write` take a chunk over SLICE_BYTES (a source that yields a whole file as one
 * chunk) in slices, the next once the socket took the last (the one loop that also writes
 * large buffered replies, {@link endInSlices}): one write of it would show `sendTimeout` no
 * progress until the client took all of it, and cut a client that is still reading. A smaller chunk goes straight through (a length test is all it
 * pays). Writes that come while a chunk is sliced wait behind it, in order, and so does `end`
 * (whose own large chunk is sliced too).
 * A write's callback goes with the last slice of its chunk, so Node calls it when all of the
 * chunk was written, or with the error that stopped it. For a stream piped into `res` (which
 * writes without callbacks) and whatever else writes to it meanwhile. Returns the function that
 * restores `res` (call it once the response finished or closed).
 */
export function sliceWrites(res: ServerResponse): () => void {
  // The prototype's methods, called with the arguments the pipe gave.
  const write = res.write as (...args: unknown[]) => boolean;
  const end = res.end as (...args: unknown[]) => ServerResponse;
  /** The chunk being sliced, null when none. */
  let bytes: Uint8Array | null = null;
  /** The callback of the chunk being sliced: written with its last slice. */
  let callback: WriteCallback | undefined;
  let at = 0;
  const queue: Queued[] = [];
  let ending: unknown[] | null = null;
  /** Writes slices until the socket is congested (false) or all is written (true). */
  const pump = (): boolean => {
    while (bytes !== null) {
      const to = Math.min(at + SLICE_BYTES, bytes.byteLength);
      const last = to === bytes.byteLength;
      const flowing = write.call(res, bytes.subarray(at, to), last ? callback : undefined);
      at = to;
      if (last) {
        const next = queue.shift();
        bytes = next === undefined ? null : next.data;
        callback = next === undefined ? undefined : next.cb;
        at = 0;
      }
      // `false` with nothing left queued only means the slice was above the high-water mark.
      if (!flowing && res.writableLength !== 0 && bytes !== null) return false;
    }
    if (ending !== null) {
      const args = ending;
      ending = null;
      end.apply(res, args);
    }
    return !res.writableNeedDrain;
  };
  // Before the pipe's own 'drain' listener, so the rest of a chunk goes out before the source
  // is asked for more.
  const onDrain = (): void => {
    if (bytes !== null) pump();
  };
  res.prependListener('drain', onDrain);
  res.write = ((chunk: string | Uint8Array, encoding?: unknown, cb?: unknown): boolean => {
    const size = typeof chunk === 'string' ? chunk.length : chunk.byteLength;
    // No string or bytes (a number, an object, a DataView): Node's write refuses it before
    // writing anything (queued, it would hold every later write and the end behind it). Bytes
    // are told as Node tells them, by their tag: a vm context's Uint8Array is bytes too (not an
    // instance of this realm's), and must wait behind the slices in order.
    if (
      (bytes === null && size <= SLICE_BYTES) ||
      (typeof chunk !== 'string' && !isUint8Array(chunk))
    ) {
      return write.call(res, chunk, encoding, cb);
    }
    // `write(chunk, cb)` as well as `write(chunk, encoding, cb)`.
    const done = (typeof encoding === 'function' ? encoding : cb) as WriteCallback | undefined;
    const data =
      typeof chunk === 'string'
        ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
        : chunk;
    if (bytes !== null) {
      queue.push({ data, cb: done });
      return false;
    }
    bytes = data;
    callback = done;
    return pump();
  }) as ServerResponse['write'];
  res.end = ((...args: unknown[]): ServerResponse => {
    const chunk = args[0];
    let rest = args;
    if (sizeOf(chunk) > SLICE_BYTES) {
      // `end(chunk, encoding?, cb?)` with a large chunk (a handler's own `res.end(buffer)`):
      // written in slices as any large write, then ended with what is left of the arguments.
      const encoding = typeof args[1] === 'string' ? args[1] : undefined;
      res.write(chunk as string | Uint8Array, encoding as BufferEncoding);
      rest = args.slice(encoding === undefined ? 1 : 2);
    }
    if (bytes === null) return end.apply(res, rest);
    ending = rest;
    return res;
  }) as ServerResponse['end'];
  return () => {
    res.off('drain', onDrain);
    // The instance's own methods: the prototype's show through again.
    delete (res as { write?: unknown }).write;
    delete (res as { end?: unknown }).end;
    // Left unwritten, so the response closed first (the caller restores once it finished or
    // closed): each waiting callback gets the error Node gives a write to a closed response.
    if (bytes !== null) {
      fail(callback);
      for (const waiting of queue) fail(waiting.cb);
      if (ending !== null) {
        fail(ending.find((arg) => typeof arg === 'function') as WriteCallback | undefined);
      }
    }
    bytes = null;
    callback = undefined;
    queue.length = 0;
    ending = null;
  };
  function fail(cb: WriteCallback | undefined): void {
    // A destroyed response calls it with ERR_STREAM_DESTROYED on the next tick and sends nothing.
    if (cb !== undefined) write.call(res, EMPTY, cb);
  }
}
