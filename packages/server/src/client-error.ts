import { type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { markHandedOver } from './send-watch';

/** Node's own answers to a request it could not parse (lib/_http_server.js), by error code. */
const ANSWERS: Readonly<Record<string, number>> = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

/**
 * A `clientError` listener for servers `listen()` starts: Node's default, except for bytes
 * that came after a request with `Connection: close` (`HPE_CLOSED_CONNECTION`). Node's default
 * answers those with a 400 in place of the response still being made for that request, and drops
 * the connection under it; RFC 9112 §9.6 says to send that response and ignore what follows, which
 * Node does by itself once nothing destroys the socket (it closes it after that response).
 */
export function onClientError(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'HPE_CLOSED_CONNECTION') return;
  const status = ANSWERS[err.code ?? ''] ?? 400;
  const inFlight = (socket as { _httpMessage?: InFlight | null })._httpMessage;
  // A response ended in the same tick (the request before these bytes, run by the same parse):
  // when all of it is with the kernel, the client gets it whole, so it is finished (onResponse),
  // though its 'finish' comes after this cut.
  if (inFlight?.writableEnded && inFlight.writableLength === 0) {
    markHandedOver(inFlight);
    answer(socket, status, err);
    return;
  }
  // The answer of an earlier request, whole, still being made: a client pipelining reads
  // responses in request order, so a 400 now would be taken as that request's answer, and
  // destroying the socket would lose it. It goes first; the 400 follows (RFC 9112 §9.3.2).
  if (inFlight?.req?.complete === true) {
    // The parser is spent: what else comes is not read.
    socket.pause();
    const after = (): void => {
      socket.off('close', after);
      inFlight.off('finish', after);
      // Node hands the socket to a response queued behind it, or ends it (`Connection: close`).
      setImmediate(() => {
        if (!socket.destroyed) onClientError(err, socket);
      });
    };
    inFlight.once('finish', after);
    socket.once('close', after);
    return;
  }
  // As Node: answer only where nothing of the response in flight (this request's) was written.
  if (inFlight == null || inFlight._headerSent !== true) {
    answer(socket, status, err);
    return;
  }
  socket.destroy(err);
}

type InFlight = ServerResponse & { _headerSent?: boolean };

function answer(socket: Socket, status: number, err: Error): void {
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n\r\n`);
  }
  socket.destroy(err);
}
