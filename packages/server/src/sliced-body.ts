import type { ServerResponse } from 'node:http';
import { type SendWatch, watchSend } from './send-watch';

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
 * the client takes it. The `sendTimeout` watcher starts only when a slice is left queued, and
 * covers every byte: `res.end()` is called once the last slice drained. If the response closes
 * first (the client left, or took nothing for `sendTimeout`), the body is let go. `done` is
 * called once, after `res.end()` or when the response closed.
 */
export function endInSlices(
  res: ServerResponse,
  body: string | Uint8Array,
  watch: SendWatch,
  done: () => void,
): void {
  // The socket would turn a string into bytes anyway; here once, so slices are views of it.
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const total = bytes.byteLength;
  let at = 0;
  let unwatch: (() => void) | null = null;
  let over = false;
  const stop = (): void => {
    if (over) return;
    over = true;
    res.off('drain', pump);
    res.off('close', stop);
    if (unwatch !== null) unwatch();
    done();
  };
  function pump(): void {
    if (res.destroyed) {
      stop();
      return;
    }
    while (at < total) {
      const end = Math.min(at + SLICE_BYTES, total);
      const flowing = res.write(bytes.subarray(at, end));
      at = end;
      // `false` with nothing left queued only means the slice was above the high-water mark.
      if (!flowing && res.writableLength !== 0) {
        if (unwatch === null) {
          unwatch = watchSend(res, watch);
          res.on('close', stop);
        }
        res.once('drain', pump);
        return;
      }
    }
    res.end();
    stop();
  }
  pump();
}
