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
  // As Node: answer only where nothing of an in-flight response was written yet.
  const inFlight = (
    socket as { _httpMessage?: (ServerResponse & { _headerSent?: boolean }) | null }
  )._httpMessage;
  // A response ended in the same tick (the request before these bytes, run by the same parse):
  // when all of it is with the kernel, the client gets it whole, so it is finished (onResponse),
  // though its 'finish' comes after this cut.
  if (inFlight?.writableEnded && inFlight.writableLength === 0) {
    markHandedOver(inFlight);
  }
  if (socket.writable && (inFlight == null || inFlight._headerSent !== true)) {
    const status = ANSWERS[err.code ?? ''] ?? 400;
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n\r\n`);
  }
  socket.destroy(err);
}
