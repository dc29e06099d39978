import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants, type Http2Stream } from 'node:http2';

/**
 * The HTTP/2 stream under a response of Node's compat layer (`app.attach(http2Server)`), or
 * `undefined` for an HTTP/1 response. Read on watch paths only, never per request of `listen`.
 */
export function h2StreamOf(res: ServerResponse): Http2Stream | undefined {
  return (res as { stream?: Http2Stream }).stream;
}

type H2Response = ServerResponse & { stream: Http2Stream };

/**
 * What an Http2ServerResponse lacks of the Writable fields keel reads on every response: without
 * `destroyed` a stream its client reset looked open (keel wrote on, judged it sent), without
 * `writableNeedDrain` one whose client stopped reading never looked congested (`sendTimeout`,
 * an event stream's queue). Both are the stream's own.
 */
const H2_FIELDS: [string, PropertyDescriptor][] = [
  [
    'destroyed',
    {
      get(this: H2Response) {
        return this.stream.destroyed;
      },
      configurable: true,
    },
  ],
  [
    'writableNeedDrain',
    {
      get(this: H2Response) {
        return this.stream.writableNeedDrain;
      },
      configurable: true,
    },
  ],
];

/**
 * Gives a response of an attached HTTP/2 server the fields it lacks ({@link H2_FIELDS}); false
 * (nothing done) for an HTTP/1 one. Called per request of an attached HTTP/2 server only.
 */
export function adaptH2(res: ServerResponse): boolean {
  if (h2StreamOf(res) === undefined) return false;
  for (const [name, field] of H2_FIELDS) {
    // A Node that has the field keeps its own.
    if (!(name in res)) Object.defineProperty(res, name, field);
  }
  return true;
}

/**
 * Resets the HTTP/2 stream of `res` with `code`, by default CANCEL (RFC 9113 §8.7: the response
 * is no longer wanted), before it is destroyed: a bare destroy resets with NO_ERROR, which tells the client of
 * an event stream or a body without a length that it got all of it. Only that stream: the
 * session's other streams go on. False for an HTTP/1 response (nothing done).
 */
export function resetH2(res: ServerResponse, code: number = constants.NGHTTP2_CANCEL): boolean {
  const stream = h2StreamOf(res);
  if (stream === undefined) return false;
  if (!stream.closed && !stream.destroyed) stream.close(code);
  return true;
}

/**
 * HTTP/2: a request body nobody will read (a 404's, a 413's, one its handler left) is not drained
 * as on HTTP/1, where draining keeps the connection usable: once the response went out whole, its
 * stream is closed with RST_STREAM NO_ERROR, which asks the client to stop sending (RFC 9113
 * §8.1). Node does so itself only for a stream nobody began to read. Paused meanwhile, so the
 * client gets no more window; destroyed rather than closed, so what it holds is let go (a closed
 * stream that was read and paused waits for its buffered data to be read before it goes).
 */
export function stopUnreadH2Body(req: IncomingMessage, stream: Http2Stream): void {
  req.pause();
  if (stream.writableFinished) endUnread(stream);
  else stream.once('finish', () => endUnread(stream));
}

/**
 * HTTP/2: a body the handler paused with its `data` listener left on (`on('data')`, `pause()`,
 * answer). Node neither reads on nor closes such a stream (its reading began): it stayed open
 * until its timeout. Resumed for one chunk, to tell a leftover listener from a reader with
 * backpressure of its own: a listener that pauses it again reads on (it keeps its body, as on
 * HTTP/1); one that does not is left over, and the body is stopped as an unread one
 * ({@link stopUnreadH2Body}). Nothing is drained past that chunk.
 */
export function stopLeftH2Body(req: IncomingMessage, stream: Http2Stream): void {
  // Added after the handler's listener, so it runs after it and sees whether it paused.
  const onData = (): void => {
    done();
    if (req.readableFlowing !== false) stopUnreadH2Body(req, stream);
  };
  const done = (): void => {
    req.off('data', onData);
    req.off('end', done);
    req.off('close', done);
  };
  req.on('data', onData);
  req.on('end', done);
  req.on('close', done);
  req.resume();
}

/**
 * Turns {@link endUnread} waits for the frame that ends the response before it resets anyway (a
 * client whose window is shut never lets it out; sendTimeout is what cuts such a stream).
 */
const END_STREAM_TURNS = 32;

/**
 * Destroys the stream once the frame carrying END_STREAM went out: the response's 'finish' comes
 * before nghttp2 writes it, and a reset then went out first, so the response never ended on the
 * wire (a Node client uploading never saw its stream close). Checked each turn, a few turns at
 * most.
 */
function endUnread(stream: Http2Stream, turn = 0): void {
  if (stream.destroyed) return;
  if (stream.closed || stream.state.localClose === 1 || turn >= END_STREAM_TURNS) {
    stream.destroy();
    return;
  }
  setImmediate(endUnread, stream, turn + 1);
}

/** The RST_STREAM code of a response cut by a server error (RFC 9113 §7). */
export const H2_INTERNAL_ERROR = constants.NGHTTP2_INTERNAL_ERROR;

const meters = new WeakMap<Http2Stream, () => number>();

/**
 * A count that grows each time `stream` hands some of its bytes on (what `sendTimeout` calls
 * progress): bytes written to it minus those it still holds. Per stream, not per session: one
 * stream of a session can be stalled by flow control while the others move. Counted from the
 * first call on (its writes are measured by how much each adds to its queue, so strings and
 * encodings count as the stream counts them); once per stream, on the watch path only.
 */
export function h2Progress(stream: Http2Stream): () => number {
  const known = meters.get(stream);
  if (known !== undefined) return known;
  // What it holds now counts as written: what it hands on of it is progress.
  let written = stream.writableLength;
  const write = stream.write as (...args: unknown[]) => boolean;
  stream.write = function (this: Http2Stream, ...args: unknown[]): boolean {
    const before = this.writableLength;
    const flowing = write.apply(this, args);
    written += this.writableLength - before;
    return flowing;
  } as Http2Stream['write'];
  const meter = (): number => written - stream.writableLength;
  meters.set(stream, meter);
  return meter;
}
