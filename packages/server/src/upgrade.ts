import type { IncomingMessage } from 'node:http';

/**
 * `Connection` names `upgrade`: with an `Upgrade` header, what makes Node's parser stop at the
 * end of the request (llhttp's upgrade flag).
 */
export function asksUpgrade(connection: string | undefined): boolean {
  return connection !== undefined && /(?:^|,)[ \t]*upgrade[ \t]*(?:,|$)/i.test(connection);
}

type ParsedSocket = { parser?: { getCurrentBuffer?: () => Buffer } | null };

/** The end of a request head: an empty line (a bare LF too, should a lenient parser take one). */
const EMPTY_LINE = /\n\r?\n/g;

/**
 * Whether nothing was read past an upgrade request the app serves as a plain one. Node's parser
 * stops at its end and, with no 'upgrade' listener, drops the rest of the read that held it (a
 * request pipelined in the same write); the reads after it are parsed as usual. Provable only
 * while the parser still holds that read, i.e. from the handler, called as the head is parsed:
 * `getCurrentBuffer()` (not on every Node version, and empty when the socket is fed from JS, as
 * TLS is: then false) returns a copy of it. Nothing was dropped when the read ends where the
 * request does: its one empty line is its last bytes, or its Content-Length body follows up to
 * the end. The read must not start with CR or LF (the head's empty line could have begun in the
 * read before, and the one found be another request's). A body in later reads, or chunked, is
 * not known here: false.
 */
export function endsItsRead(req: IncomingMessage): boolean {
  const parser = (req.socket as (IncomingMessage['socket'] & ParsedSocket) | null)?.parser;
  if (typeof parser?.getCurrentBuffer !== 'function') return false;
  const read = parser.getCurrentBuffer().toString('latin1');
  if (read.length === 0 || read.charCodeAt(0) === 13 || read.charCodeAt(0) === 10) return false;
  EMPTY_LINE.lastIndex = 0;
  if (EMPTY_LINE.exec(read) === null) return false;
  const headEnd = EMPTY_LINE.lastIndex;
  // A second empty line: another request's head (or this one's, and one before it) is there.
  if (EMPTY_LINE.exec(read) !== null) return false;
  const headers = req.headers;
  if (headers['transfer-encoding'] !== undefined) return false;
  const length = headers['content-length'];
  const body = length === undefined ? 0 : Number(length);
  return headEnd + body === read.length;
}
