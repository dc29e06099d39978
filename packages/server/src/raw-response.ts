import { type IncomingMessage, ServerResponse } from 'node:http';
import { UNSENT } from './send-watch';
import { SLICE_BYTES, sizeOf } from './sliced-body';

/** What a response tells its request's slot about the handler writing to it itself. */
export interface RawWriter {
  /**
   * A write to `res`, or an `end` with a chunk over SLICE_BYTES. Returns true when that was the
   * handler writing through `ctx.res` and the slot now watches it: `res.write` / `res.end` are
   * then sliced, and the call is to be made again through them.
   */
  rawWrite(res: ServerResponse): boolean;
}

/**
 * The response class of servers started by `listen`. It tells the slot of the first write of a
 * response (see {@link RawWriter}), so a body the handler writes through `ctx.res` while it still
 * awaits (`await pipeline(src, ctx.res)`) is watched by `sendTimeout` from its first byte; and it
 * notes a head made after its client left (Node takes it and sends nothing), so `onResponse`
 * reports such a response as not sent. Prototype methods and two fields set at construction:
 * nothing is allocated per request, and after the first write each call pays one field read.
 */
export class KeelServerResponse<
  Request extends IncomingMessage = IncomingMessage,
> extends ServerResponse<Request> {
  /** Told of the next write, then cleared: set by the app for each request. */
  writer: RawWriter | null = null;
  /** Its head was made after the response was destroyed: nothing of it reached the client. */
  [UNSENT] = false;

  override writeHead(statusCode: number, reason?: unknown, headers?: unknown): this {
    // `_implicitHeader` (a write or end with no head yet) comes through here too.
    if (this.destroyed && !this.headersSent) this[UNSENT] = true;
    return (super.writeHead as (s: number, r?: unknown, h?: unknown) => this)(
      statusCode,
      reason,
      headers,
    );
  }
  override write(chunk: unknown, encoding?: unknown, cb?: unknown): boolean {
    const writer = this.writer;
    if (writer !== null) {
      this.writer = null;
      if (writer.rawWrite(this)) return this.write(chunk, encoding, cb);
    }
    return (super.write as (c: unknown, e?: unknown, cb?: unknown) => boolean)(chunk, encoding, cb);
  }

  override end(chunk?: unknown, encoding?: unknown, cb?: unknown): this {
    const writer = this.writer;
    // keel's own replies are ended in one piece only up to SLICE_BYTES (larger ones are written
    // first): an end with a larger chunk is the handler's.
    if (writer !== null && sizeOf(chunk) > SLICE_BYTES) {
      this.writer = null;
      if (writer.rawWrite(this)) return this.end(chunk, encoding, cb);
    }
    return (super.end as (c?: unknown, e?: unknown, cb?: unknown) => this)(chunk, encoding, cb);
  }
}
