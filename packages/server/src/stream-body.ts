import type { ServerResponse } from 'node:http';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { isUint8Array } from 'node:util/types';
import { endBodiless, isBodiless } from './bodiless';
import { rangeError, typeError } from './checks';
import { closedUnder, type SendWatch, watchEnded, whenDone } from './send-watch';
import { watchWrites } from './sliced-body';

/** A body `ctx.send` streams: a Node Readable or a web ReadableStream (e.g. `fetch`'s `body`). */
export type StreamBody = Readable | NodeJS.ReadableStream | ReadableStream<Uint8Array>;

/** What a streamed body needs from the request and response. */
export interface StreamTarget {
  method: string;
  res: ServerResponse;
  /** The status set with `ctx.status()`. */
  status: number;
  /** Headers sent with every outcome (e.g. X-Request-ID), as a flat name/value list. */
  extra: string[];
  /** The app's `sendTimeout`: a client that stops taking the body is cut off. */
  watch: SendWatch;
}

/**
 * A Node stream (`pipe` and `on`: what `pipeline` takes for one; a Zod schema or an RxJS
 * Observable has a `pipe` of its own, and is data) or a web stream (has `getReader`).
 */
export function isStreamBody(body: unknown): body is StreamBody {
  return (
    typeof body === 'object' &&
    body !== null &&
    ((typeof (body as Readable).pipe === 'function' &&
      typeof (body as Readable).on === 'function') ||
      typeof (body as ReadableStream).getReader === 'function')
  );
}

/** Releases a source that will not be read: a Node stream is destroyed, a web stream cancelled. */
export function discard(source: StreamBody): void {
  if (typeof (source as ReadableStream).cancel === 'function') {
    (source as ReadableStream).cancel().catch(() => {}); // locked elsewhere: its reader's to end
  } else if (typeof (source as Readable).destroy === 'function') {
    (source as Readable).destroy();
  }
}

/**
 * Streams `source` as the body: `application/octet-stream` unless a Content-Type was set, no
 * Content-Length (chunked), never compressed. `pipeline` reads only as fast as the socket drains
 * (backpressure). HEAD, 204, 205 and 304 send the head and discard the source unread.
 *
 * Resolves when the body is written, or when the client left (the source is then destroyed or
 * cancelled by `pipeline`). Rejects with the source's error after destroying the connection: the
 * head is out, and a truncated body must not look complete to a keep-alive client.
 */
export async function sendStream(target: StreamTarget, source: StreamBody): Promise<void> {
  if ((source as ReadableStream).locked === true) {
    throw typeError('send body', 'a ReadableStream that no reader holds (locked)', source);
  }
  const { res, status } = target;
  // The client left already: release the source, send nothing (onResponse: status 0).
  if (res.destroyed) {
    discard(source);
    return;
  }
  if (isBodiless(status)) {
    endBodiless(res, status, target.extra, target.watch);
    discard(source);
    return;
  }
  const head = res.hasHeader('content-type')
    ? target.extra
    : ['content-type', 'application/octet-stream', ...target.extra];
  const declared = declaredLength(res);
  res.writeHead(status, head);
  if (target.method === 'HEAD') {
    res.end();
    watchEnded(res, target.watch);
    discard(source);
    return;
  }
  const unwatch = watchWrites(res, target.watch);
  // Judged when it finished: pipeline resolves once the source closed too (a file stream's
  // descriptor), and a client that left on the last byte meanwhile would find it taken for cut.
  const done = whenDone(res);
  try {
    // A web stream as a Node one: pipeline's own pump for web streams takes any 'drain' after
    // `end()` for the end, which a sliced last chunk still writing would give it.
    // An old-style stream (no Readable: pre-streams2, `new Stream()`) is read through a
    // Readable of its own in object mode, so its chunks are checked as an object-mode source's.
    const from =
      typeof (source as ReadableStream).getReader === 'function'
        ? Readable.fromWeb(source as WebReadableStream<Uint8Array>)
        : source instanceof Readable
          ? source
          : new Readable({ objectMode: true, read() {} }).wrap(source as NodeJS.ReadableStream);
    // An object-mode source's chunks are checked on the way: an object reaching the response's
    // write throws inside the source's own 'data' emit, past pipeline, and ends the process.
    const steps: (Readable | Transform)[] = [from];
    if (from.readableObjectMode) steps.push(bytesOnly());
    if (declared !== -1) steps.push(new Framed(declared));
    await pipeline([...steps, res]);
    // Ended is not taken: the tail may still be queued for a client that stopped reading (the
    // slot tells a cut tail once this resolves).
    await done;
  } catch (err) {
    // The response closed under the body: the client left, or took nothing for `sendTimeout`.
    // Nobody to tell. (A source that closed before its end destroyed the response with its own
    // premature close: that one is the server's, and reported.)
    if (closedUnder(res, err)) return;
    res.destroy();
    throw err;
  } finally {
    unwatch();
  }
}

/** Passes strings and bytes on; any other chunk fails the pipeline with a TypeError naming it. */
function bytesOnly(): Transform {
  return new Transform({
    writableObjectMode: true,
    transform(chunk: unknown, _enc, done) {
      // By tag, as Node's write tells bytes: a vm context's Uint8Array is bytes too.
      if (typeof chunk === 'string' || isUint8Array(chunk)) done(null, chunk);
      else done(typeError('a ctx.send stream chunk', 'a string or bytes (Uint8Array)', chunk));
    },
  });
}

/** The Content-Length the handler set (digits only), or -1: none, or none Node would frame by. */
function declaredLength(res: ServerResponse): number {
  const value = res.getHeader('content-length');
  const text = typeof value === 'number' ? String(value) : value;
  return typeof text === 'string' && /^\d{1,15}$/.test(text) ? Number(text) : -1;
}

/**
 * Holds a streamed body to the Content-Length its handler set: that length frames the response on
 * a keep-alive connection, so a surplus byte would be read as the next response's first, and a
 * short body would leave the client waiting for the rest (then read the next response as it).
 * Either fails the pipeline (the connection is destroyed, onError told). The body ends at its
 * last declared byte, not at the source's end: a file stream's end comes one more read later,
 * and a client that leaves on the last byte meanwhile got the response whole.
 */
class Framed extends Transform {
  readonly #declared: number;
  #left: number;

  constructor(declared: number) {
    super();
    this.#declared = declared;
    this.#left = declared;
    if (declared === 0) this.push(null);
  }

  override _transform(chunk: Buffer | string, _enc: BufferEncoding, done: TransformCallback): void {
    const size = typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
    if (size > this.#left) {
      // Counted up to the chunk that overran: how long the body is at least.
      done(this.#mismatch(this.#declared - this.#left + size, 'at least '));
      return;
    }
    if (size > 0) {
      this.#left -= size;
      this.push(chunk);
      if (this.#left === 0) this.push(null);
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    done(this.#left > 0 ? this.#mismatch(this.#declared - this.#left, '') : null);
  }

  /** "keel: `ctx.send stream length` must be 4 bytes (...), got at least 9 bytes". */
  #mismatch(gave: number, bound: string): RangeError {
    return rangeError(
      'ctx.send stream length',
      `${this.#declared} bytes, its Content-Length (leave the header out to send it chunked; ` +
        'the connection was closed)',
      `${bound}${gave} bytes`,
    );
  }
}
