import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants, type ServerHttp2Stream } from 'node:http2';
import { resetH2 } from './h2';
import { type Deadline, markUnsent } from './send-watch';

/**
 * `requestTimeout` for one stream of an attached HTTP/2 server. Node's `requestTimeout` and
 * `headersTimeout` time HTTP/1 connections only: a client that sent its headers, then its body
 * slowly or never its end, held the stream, its handler and the body buffered so far for ever
 * (and a session, stream after stream). A deadline from the request on, for a stream with a body
 * to come only (a request whose headers ended the stream is whole already): null for others.
 * It fires on the stream's watch (watchH2: one timer per stream, with `sendTimeout` off too, then
 * armed for the deadline alone). On HTTP/2 servers only: HTTP/1 requests never get here.
 */
export function h2RequestDeadline(
  req: IncomingMessage,
  res: ServerResponse,
  stream: ServerHttp2Stream,
  ms: number,
): Deadline | null {
  if (ms === 0 || stream.endAfterHeaders || stream.closed) return null;
  return { ms, onExpire: () => expire(req, res, stream) };
}

/**
 * The request was not whole in time: 408 if nothing was sent yet, the stream closed after a whole
 * answer, else reset (CANCEL); its handler's ctx sees the abort either way (ctx.signal, ctx.req).
 */
function expire(req: IncomingMessage, res: ServerResponse, stream: ServerHttp2Stream): void {
  // Its body came whole (END_STREAM), read or not: the rest is the app's time, as on HTTP/1.
  if (stream.closed || stream.destroyed || stream.state.remoteClose === 1) return;
  // Destroyed, the request ends without 'end': a handler reading it never takes what it got so
  // far for the whole body (Node's compat request ends it as if complete when its stream closes).
  req.destroy();
  if (stream.headersSent) {
    if (res.writableEnded && stream.writableFinished) {
      // The answer went out whole before the body, its handler still running (a body nobody
      // reads is ended once its answer went out: stopUnreadH2Body): RFC 9113 §8.1, the client
      // is asked to stop sending, without an error.
      stream.close(constants.NGHTTP2_NO_ERROR);
      return;
    }
    // Part of a response went out: only a reset tells the client it is cut.
    resetH2(res);
    res.destroy();
    return;
  }
  // As HTTP/1's 408, which Node writes past the response: the app's response was not sent
  // (onResponse status 0), and its ctx sees the abort (ctx.signal).
  markUnsent(res);
  try {
    stream.respond({ ':status': 408 }, { endStream: true });
  } catch {
    // The stream turned unusable meanwhile (its session is going): reset, never throw from a timer.
    stream.close(constants.NGHTTP2_CANCEL);
    return;
  }
  // RFC 9113 §8.1: a complete answer, then RST_STREAM NO_ERROR asks the client to stop sending
  // (Node flushes the 408 before the reset). Destroyed now, not once the 408 is out: a handler
  // answering meanwhile finds its response gone, as on HTTP/1, rather than headers sent.
  stream.destroy();
}
