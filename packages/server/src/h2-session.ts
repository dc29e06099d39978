import type { Http2Session, ServerHttp2Stream } from 'node:http2';
import type { Clock, TimerHandle } from './clock';

/**
 * `keepAliveTimeout` for the sessions of an attached HTTP/2 server: Node closes an idle HTTP/1
 * connection after `server.keepAliveTimeout`, but has no such bound for an HTTP/2 session (its
 * `server.timeout` is off by default, and when on it closes a session whose streams are merely
 * quiet, a slow handler's too). A session with no stream open for `ms` (none since it began, or
 * since its last one closed; its silent uploads are ended by `requestTimeout` first) is closed
 * gracefully (GOAWAY): a client that opened one and went quiet, or opens none, pins nothing;
 * if the peer has not closed it `ms` later (it may never read the GOAWAY), its connection is
 * destroyed. One timer per idle session, none while a stream is open. Called per session,
 * HTTP/2 only.
 */
export function watchH2Session(
  session: Http2Session,
  ms: number,
  clock: Clock,
  /** Destroys the session's connection: a graceful close waits for the peer, who may not read. */
  cut: () => void,
): void {
  if (ms === 0 || session.closed || session.destroyed) return;
  let open = 0;
  let timer: TimerHandle = null;
  const idle = (): void => {
    timer = null;
    if (open === 0 && !session.closed && !session.destroyed) {
      session.close();
      // Node ends the socket and waits for the peer to close it: one that never reads never
      // does. Another `ms` for it, then the connection goes.
      timer = clock.setTimeout(() => {
        timer = null;
        if (!session.destroyed) cut();
      }, ms);
    }
  };
  const streamClosed = (): void => {
    if (--open === 0 && !session.closed && !session.destroyed) timer = clock.setTimeout(idle, ms);
  };
  session.on('stream', (stream: ServerHttp2Stream) => {
    if (open++ === 0 && timer !== null) {
      clock.clearTimeout(timer);
      timer = null;
    }
    stream.once('close', streamClosed);
  });
  session.once('close', () => {
    if (timer !== null) clock.clearTimeout(timer);
    timer = null;
  });
  timer = clock.setTimeout(idle, ms);
}
