import type { IncomingMessage } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import { HttpError } from './errors';

/** What the body parser does with a request's content type. */
export enum BodyKind {
  None = 0,
  Json = 1,
  Form = 2,
}

/** Picks the parser from Content-Type; anything else is left unread on `ctx.req`. */
export function bodyKindOf(req: IncomingMessage): BodyKind {
  const headers = req.headers;
  const length = headers['content-length'];
  if ((length === undefined || length === '0') && headers['transfer-encoding'] === undefined) {
    return BodyKind.None;
  }
  const type = headers['content-type'];
  if (type === undefined) return BodyKind.None;
  const semi = type.indexOf(';');
  const mime = (semi === -1 ? type : type.slice(0, semi)).trim().toLowerCase();
  if (mime === 'application/json' || mime.endsWith('+json')) return BodyKind.Json;
  if (mime === 'application/x-www-form-urlencoded') return BodyKind.Form;
  return BodyKind.None;
}

/** Parses a complete body; throws HttpError(400) on malformed JSON. */
export function parseBody(kind: BodyKind, buf: Buffer): unknown {
  if (buf.length === 0) return undefined;
  let text = buf.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (kind === BodyKind.Form) return parseQuery(text); // null prototype, maxKeys 1000
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, 'Malformed JSON body');
  }
}

/** Called once per read: the parsed body, or the error to respond with, or `aborted`. */
export type BodyDone = (error: HttpError | null, body: unknown, aborted: boolean) => void;

/**
 * Reads one request body with a byte limit. One reader lives with each pooled ctx; its listeners
 * are bound once, so reading a body allocates only the chunks.
 */
export class BodyReader {
  #req: IncomingMessage | null = null;
  #kind: BodyKind = BodyKind.None;
  #limit = 0;
  #size = 0;
  #chunks: Buffer[] = [];
  readonly #done: BodyDone;

  constructor(done: BodyDone) {
    this.#done = done;
  }

  read(req: IncomingMessage, kind: BodyKind, limit: number): void {
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > limit) {
      this.#done(new HttpError(413, `Request body exceeds ${limit} bytes`), undefined, false);
      return;
    }
    this.#req = req;
    this.#kind = kind;
    this.#limit = limit;
    req.on('data', this.#onData);
    req.on('end', this.#onEnd);
    req.on('error', this.#onAbort);
    req.on('close', this.#onAbort);
  }

  #onData = (chunk: Buffer): void => {
    this.#size += chunk.length;
    if (this.#size > this.#limit) {
      const req = this.#req;
      this.#finish();
      // Stop reading; the 413 is sent with Connection: close so the rest is never parsed.
      req?.pause();
      this.#done(new HttpError(413, `Request body exceeds ${this.#limit} bytes`), undefined, false);
      return;
    }
    this.#chunks.push(chunk);
  };

  #onEnd = (): void => {
    const chunks = this.#chunks;
    const kind = this.#kind;
    this.#finish();
    let body: unknown;
    try {
      body = parseBody(kind, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    } catch (err) {
      this.#done(err as HttpError, undefined, false);
      return;
    }
    this.#done(null, body, false);
  };

  #onAbort = (): void => {
    if (this.#req === null) return;
    this.#finish();
    this.#done(null, undefined, true);
  };

  /** Removes every listener and forgets the request; safe to call twice. */
  #finish(): void {
    const req = this.#req;
    if (req !== null) {
      req.off('data', this.#onData);
      req.off('end', this.#onEnd);
      req.off('error', this.#onAbort);
      req.off('close', this.#onAbort);
    }
    this.#req = null;
    this.#chunks = [];
    this.#size = 0;
  }

  reset(): void {
    this.#finish();
  }
}
