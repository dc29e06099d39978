import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import { parse as parseQuery } from 'node:querystring';
import secureJson from 'secure-json-parse';
import {
  type BodyCharset,
  decodeBody,
  formDecoder,
  isMediaType,
  mediaTypeOf,
  plusAsSpace,
} from './charset';
import { rangeError, typeError } from './checks';
import type { Clock } from './clock';
import { BodyTooLargeError, HttpException } from './errors';
import { stopLeftH2Body, stopUnreadH2Body } from './h2';

/**
 * The rest of a refused body is read and thrown away, up to this many bytes, so the client gets
 * to read the 413: closing a socket that still has unread data makes the kernel send a reset,
 * and many clients then report the reset instead of the response. Past it, the connection ends.
 */
export const DISCARD_LIMIT = 16 * 1024 * 1024;

/**
 * How long a connection closed after a refused body waits for the client to stop sending (see
 * {@link closeLingering}).
 */
export const LINGER_MS = 2000;

type LingeringSocket = Socket & {
  /** Node's HTTP parser; `_consumed`: it reads the socket natively, unseen by 'data'. */
  parser?: { _consumed?: boolean; unconsume?: () => void } | null;
  /** Set by Node's http while it holds the socket paused (see linger). */
  _paused?: boolean;
  _handle?: { reading?: boolean; readStart: () => number } | null;
};

/**
 * Has the connection of `req` close after `res` (`Connection: close`) without a reset. Destroyed
 * at once (Node's way) while its client is still sending a body nobody reads, the socket draws a
 * reset: the client's writes fail, and most clients then report that error and drop the answer
 * they had not read yet. Instead, once the response is out the server stops writing (FIN), reads
 * and drops whatever still comes, up to DISCARD_LIMIT bytes or LINGER_MS, and closes when the
 * client ends, or at either bound. Only the closing path pays (a property on its socket); on
 * HTTP/2 the stream's own reset covers it (see discardRest).
 */
export function closeLingering(req: IncomingMessage, res: ServerResponse, clock: Clock): void {
  res.shouldKeepAlive = false;
  const socket = req.socket as LingeringSocket | null;
  if ((req as H2Request).stream !== undefined || socket === null || socket.destroyed) return;
  // Node calls destroySoon when the last response finished (resOnFinish): shadowed on this
  // socket alone, and only until then.
  socket.destroySoon = () => {
    delete (socket as Partial<Socket>).destroySoon;
    linger(socket, clock);
  };
}

function linger(socket: LingeringSocket, clock: Clock): void {
  if (socket.readableEnded || socket.destroyed) {
    // The client sends nothing more: Node's own close.
    socket.destroySoon();
    return;
  }
  // Taken back from Node's parser, which would read what comes as further requests: those bytes
  // are only counted, and dropped.
  const parser = socket.parser;
  let native = false;
  if (parser?._consumed === true && typeof parser.unconsume === 'function') {
    parser.unconsume();
    parser._consumed = false;
    native = true;
  }
  socket.removeAllListeners('data');
  // Node's http pauses a socket whose responses back up (`_paused`), and its 'resume' listener
  // pauses it again while that is set: nothing would be read, not even the client's end.
  socket.removeAllListeners('pause');
  socket.removeAllListeners('resume');
  socket._paused = false;
  socket.end();
  let seen = 0;
  const close = (): void => {
    clock.clearTimeout(timer);
    socket.off('data', onData);
    socket.off('end', close);
    socket.off('close', close);
    socket.destroy();
  };
  const onData = (chunk: Buffer): void => {
    seen += chunk.length;
    if (seen > DISCARD_LIMIT) close();
  };
  const timer = clock.setTimeout(close, LINGER_MS);
  socket.on('data', onData);
  socket.on('end', close);
  socket.on('close', close);
  socket.resume();
  // As Node's own 'resume' listener does: the stream thinks a read is pending (its first one,
  // whose data the parser took natively), and then resume() alone starts none.
  const handle = socket._handle;
  if (native && handle?.reading === false) {
    handle.reading = true;
    handle.readStart();
  }
}

/** Set on a request that sent `Expect: 100-continue`; the reader answers it (see app.listen). */
export const EXPECTS_CONTINUE = Symbol('keel.expectsContinue');

type ExpectingRequest = IncomingMessage & { [EXPECTS_CONTINUE]?: 'pending' | 'refused' };

/** A 413; `close`: the connection ends with it (the body will not be drained). */
function tooLarge(limit: number, close: boolean): BodyTooLargeError {
  return new BodyTooLargeError(limit, undefined, { closeConnection: close });
}

type H2Request = IncomingMessage & { stream?: Http2Stream };

/**
 * The rest of `req`, that nobody will read: dropped ({@link drainRest}), or on HTTP/2 not taken
 * at all ({@link stopUnreadH2Body}). An HTTP/1 request has no `stream`: one property read.
 */
function discardRest(req: IncomingMessage, budget: number): void {
  const stream = (req as H2Request).stream;
  if (stream === undefined) drainRest(req, budget);
  else stopUnreadH2Body(req, stream);
}

/**
 * Who else may read a body being drained: nobody (every byte counts toward the bound), the
 * handler's own reader (a listener, a pipe, an iterator: only what comes while nobody else
 * listens counts), or a `data` listener left on a body the handler paused: counted as nobody's
 * until the listener pauses it again (a reader with backpressure of its own), then the handler's.
 */
enum Reader {
  None = 0,
  Handler = 1,
  Paused = 2,
}

/**
 * Reads the rest of `req` and drops it; ends the connection if more than `budget` bytes come
 * that nobody else reads (see {@link Reader}). Its own listeners (not the pooled reader's): it
 * outlives the request's slot.
 */
function drainRest(req: IncomingMessage, budget: number, reader = Reader.None): void {
  let seen = 0;
  let shared = reader === Reader.Handler;
  // A chunked body counts bytes on the wire, framing included: chunk extensions (up to 16 KiB per
  // chunk in Node) carry no body, and 1-byte chunks under them would take 16,000 times the budget
  // to reach it. (A Content-Length body has no framing; its budget may be its exact length, and a
  // read may hold the next pipelined request too.)
  const socket = req.headers['transfer-encoding'] === undefined ? undefined : req.socket;
  let wire = socket?.bytesRead ?? 0;
  const onData = (chunk: Buffer): void => {
    const read = socket?.bytesRead ?? 0;
    const came = Math.max(chunk.length, read - wire);
    wire = read;
    if (shared && (req.listenerCount('data') > 1 || req.listenerCount('readable') > 0)) return;
    seen += came;
    if (seen > budget) {
      stop();
      req.socket?.destroy();
    }
  };
  const onPause = (): void => {
    shared = true;
    req.off('pause', onPause);
  };
  const stop = (): void => {
    req.off('data', onData);
    req.off('pause', onPause);
    req.off('end', stop);
    req.off('close', stop);
  };
  req.on('data', onData);
  req.on('end', stop);
  req.on('close', stop);
  if (reader === Reader.Paused) {
    req.resume();
    req.on('pause', onPause);
  }
}

/** Whether `req` is piped on (a pipe pauses it while its destination is full). */
function piped(req: IncomingMessage): boolean {
  // A private field: test/adversarial/unread-body.test.ts ('a body piped on after the answer')
  // fails if a Node release changes it (the pipe's body would be drained and cut at the bound).
  const state = (req as unknown as { _readableState?: { pipes?: unknown[] } })._readableState;
  return (state?.pipes?.length ?? 0) > 0;
}

/**
 * A request of an attached HTTP/2 server whose body has no Content-Length: valid on HTTP/2, where
 * the END_STREAM flag of its last DATA frame frames it (streaming fetch uploads, many h2 clients),
 * told by its stream not having ended with its headers. Asked only of requests HTTP/1 would give
 * no body (no Content-Length, no Transfer-Encoding; HTTP/2 has none): an HTTP/1 request has no
 * `stream`, so it costs those one property read.
 */
function unframedH2Body(req: IncomingMessage): boolean {
  return (req as H2Request).stream?.endAfterHeaders === false;
}

/**
 * A Content-Length other than 0, or a Transfer-Encoding (Node refuses the two together), or on
 * HTTP/2 a body framed by its stream alone ({@link unframedH2Body}).
 */
function declaresBody(req: IncomingMessage): boolean {
  const headers = req.headers;
  const length = headers['content-length'];
  if (length !== undefined) return length !== '0';
  return headers['transfer-encoding'] !== undefined || unframedH2Body(req);
}

/**
 * A request no route takes (404, 405), or whose body is refused for its headers (415, 400, 501),
 * needs no body: it is not read, nor asked for with `100 Continue`. What comes is drained (Node's
 * own drain has no bound) up to DISCARD_LIMIT, then the connection ends; one declared larger, or
 * one the client waits to send (the 100 is not coming: it may send the body or not), ends the
 * connection after the answer, lingering (see closeLingering). On HTTP/2 nothing is drained: see
 * discardRest.
 */
export function skipBody(req: IncomingMessage, res: ServerResponse, clock: Clock): void {
  if (!declaresBody(req)) return;
  const length = req.headers['content-length'];
  const expecting = req as ExpectingRequest;
  if (expecting[EXPECTS_CONTINUE] === 'pending') {
    expecting[EXPECTS_CONTINUE] = 'refused';
    closeLingering(req, res, clock);
  } else if (length !== undefined && Number(length) > DISCARD_LIMIT) {
    closeLingering(req, res, clock);
  } else {
    discardRest(req, DISCARD_LIMIT);
  }
}

/**
 * For an answer that closes its connection though its request declared a body (the 505 of a
 * version keel does not speak): `res` ended once the body is drained, up to DISCARD_LIMIT (past
 * it the connection ends). Closed with body bytes unread, the kernel resets the connection, and a
 * client still sending may lose the answer it had not read yet. Ended at once when no body will
 * come whole: none declared; one declared larger, or one the client may wait to send (`Expect`),
 * and then the close lingers (see closeLingering) for what the client sends anyway.
 */
export function endAfterBody(req: IncomingMessage, res: ServerResponse, clock: Clock): void {
  if (req.complete || !declaresBody(req)) {
    res.end();
    return;
  }
  const length = req.headers['content-length'];
  if (
    req.headers.expect !== undefined ||
    (length !== undefined && Number(length) > DISCARD_LIMIT)
  ) {
    closeLingering(req, res, clock);
    res.end();
    return;
  }
  req.once('end', () => res.end());
  drainRest(req, DISCARD_LIMIT);
}

/**
 * Once its request is over: the rest of a body nobody read (a GET's, a type no parser takes, a
 * route that never reads it) is drained as skipBody's, up to DISCARD_LIMIT, then the connection
 * ends. Node's own drain (when the response finished) has no bound: a client could stream into
 * any route until `requestTimeout`. A body complete, or one something still reads (a `data` or
 * `readable` listener: a pipe, an iterator) is left alone. Its first test is all a request
 * without a body pays once it was read through.
 */
export function drainUnread(req: IncomingMessage): void {
  if (req.complete || !declaresBody(req) || req.destroyed) return;
  const dumped = req as IncomingMessage & { _dumped?: boolean };
  if (dumped._dumped === true) {
    // Node's drain began (the response finished first): its parser drops the body's bytes
    // unseen while `_dumped` is set. Cleared, they reach the request again, and are counted.
    // A private field: test/adversarial/unread-body.test.ts ('a chunked GET body on a route
    // answering with a stream') fails if a Node release changes it.
    dumped._dumped = false;
  } else if (req.readableFlowing !== null) {
    const stream = (req as H2Request).stream;
    const h1 = stream === undefined;
    const listened = req.listenerCount('data') > 0;
    if (listened && req.readableFlowing === false && !piped(req)) {
      // A `data` listener left on a body the handler paused (`on('data')`, `pause()`, answer):
      // Node drains no body whose reading began, so the rest filled the buffers and the next
      // request on the connection waited for `requestTimeout`. Resumed and drained as an unread
      // one (the listener sees the chunks), unless the listener pauses it again: a reader with
      // backpressure of its own, answering before it read on, keeps its body. On HTTP/2 the
      // stream stayed open until its timeout: resumed for one chunk to tell the two apart, then
      // stopped as an unread body (no drain, see discardRest).
      if (h1) drainRest(req, DISCARD_LIMIT, Reader.Paused);
      else stopLeftH2Body(req, stream);
      return;
    }
    if (listened || req.listenerCount('readable') > 0) {
      // A reader is left (a flowing listener, a pipe, an iterator): the handler reads it.
      // Watched, as a `once('data')` goes after one chunk and leaves the body flowing to nobody:
      // what comes while nobody listens counts toward the bound.
      if (h1) drainRest(req, DISCARD_LIMIT, Reader.Handler);
      return;
    }
    // No reader left. Flowing (its `once('data')` went): Node drops the rest without a bound.
    // Paused (`ctx.req.pause()` and never read): nobody will read it, and Node would either
    // drain it without a bound when the response finishes (no byte arrived yet) or leave the
    // connection stalled for ever behind a full buffer (some did). Drained as an unread one; on
    // HTTP/2 not taken (see discardRest).
    if (h1 && !req.readableFlowing) req.resume();
  }
  discardRest(req, DISCARD_LIMIT);
}

/** What the body parser does with a request's content type. */
export enum BodyKind {
  None = 0,
  Json = 1,
  Form = 2,
  Text = 3,
  Raw = 4,
  /** A transfer coding besides `chunked` (Node frames the body but does not decode it): 501. */
  UnknownCoding = 5,
}

/**
 * Which request bodies are read besides JSON and urlencoded forms (always read), and how. Types
 * are `type/subtype`, `type/*` or `*\/*`, compared without parameters and case.
 */
export interface BodyParsers {
  /**
   * Types read as text: `ctx.body` is a string, e.g. `['text/*']`, decoded by the Content-Type's
   * `charset` (UTF-8 when none; one TextDecoder does not know is a 415).
   *
   * @default []
   */
  text?: readonly string[] | undefined;
  /**
   * Types read as bytes: `ctx.body` is a Buffer, e.g. `['application/octet-stream']`; `'*\/*'`
   * takes every type no other parser does (a body without Content-Type counts as
   * `application/octet-stream`).
   *
   * @default []
   */
  raw?: readonly string[] | undefined;
}

/** Options of one route: they replace the app's for that route's requests. */
export interface RouteOptions {
  /** Largest body accepted on this route, in bytes. @default the app's `bodyLimit` */
  bodyLimit?: number | undefined;
  /**
   * Deepest nesting of arrays and objects in a JSON body on this route, 1-2048.
   *
   * @default the app's `maxJsonDepth`
   */
  maxJsonDepth?: number | undefined;
  /** Text and raw parsers of this route. @default the app's `parsers` */
  parsers?: BodyParsers | undefined;
}

/** A compiled type list; null when empty. */
export type TypeMatcher = ((mime: string) => boolean) | null;

/** How one route reads bodies, resolved once when the route (or the app) is registered. */
export interface BodyPolicy {
  limit: number;
  /** Deepest JSON nesting accepted (`maxJsonDepth`). */
  depth: number;
  text: TypeMatcher;
  raw: TypeMatcher;
}

const MEDIA_TYPE = /^(?:\*\/\*|[\w.+-]+\/(?:\*|[\w.+-]+))$/;

/** Compiles `parsers.text` or `parsers.raw`; throws a TypeError naming a malformed type. */
export function typeMatcher(name: string, list: readonly string[] | undefined): TypeMatcher {
  if (list === undefined) return null;
  const expected = 'an array of media types (type/subtype, type/* or */*)';
  if (!Array.isArray(list)) throw typeError(`parsers.${name}`, expected, list);
  if (list.length === 0) return null;
  const exact = new Set<string>();
  const prefixes: string[] = [];
  let any = false;
  for (const entry of list) {
    const what = `parsers.${name}[]`;
    if (typeof entry !== 'string') throw typeError(what, 'a media type', entry);
    if (!MEDIA_TYPE.test(entry)) {
      throw rangeError(what, 'a media type (type/subtype, type/* or */*)', entry);
    }
    const type = entry.toLowerCase();
    if (type === '*/*') any = true;
    else if (type.endsWith('/*')) prefixes.push(type.slice(0, -1));
    else exact.add(type);
  }
  return (mime) => any || exact.has(mime) || prefixes.some((prefix) => mime.startsWith(prefix));
}

/** Picks the parser from Content-Type; a type no parser takes is left unread on `ctx.req`. */
export function bodyKindOf(req: IncomingMessage, policy: BodyPolicy): BodyKind {
  const headers = req.headers;
  const length = headers['content-length'];
  if (length === undefined || length === '0') {
    // Node refuses Content-Length with Transfer-Encoding, so only these requests can have one.
    const coding = headers['transfer-encoding'];
    if (coding === undefined) {
      // HTTP/2 has no Transfer-Encoding: its body may come with no length at all.
      if (length !== undefined || !unframedH2Body(req)) return BodyKind.None;
    } else if (coding !== 'chunked' && coding.trim().toLowerCase() !== 'chunked') {
      // `gzip, chunked`: Node strips the chunking and hands on the gzip bytes as if they were the
      // body. Only chunked is understood (as nginx: anything else is 501, RFC 9112 §6.1).
      return BodyKind.UnknownCoding;
    }
  }
  const type = headers['content-type'];
  if (type === undefined) {
    return policy.raw?.('application/octet-stream') === true ? BodyKind.Raw : BodyKind.None;
  }
  // The common case, checked without slicing: a JSON POST allocates nothing here.
  if (isMediaType(type, 'application/json')) return BodyKind.Json;
  // The rest read the same way (OWS only), so a type isMediaType refuses is no JSON here either.
  const mime = mediaTypeOf(type);
  if (mime.endsWith('+json')) return BodyKind.Json;
  if (mime === 'application/x-www-form-urlencoded') return BodyKind.Form;
  if (policy.text?.(mime) === true) return BodyKind.Text;
  if (policy.raw?.(mime) === true) return BodyKind.Raw;
  return BodyKind.None;
}

const FORBIDDEN_KEY = 'Object contains forbidden prototype property';

/** Fields of a urlencoded body or a query string; querystring's own default `maxKeys`. */
export const MAX_FORM_FIELDS = 1000;

/** More `&`-separated fields than MAX_FORM_FIELDS (what querystring counts, empty ones too). */
export function tooManyFields(text: string): boolean {
  let at = -1;
  for (let n = 0; n < MAX_FORM_FIELDS; n++) {
    at = text.indexOf('&', at + 1);
    if (at === -1) return false;
  }
  return true;
}

/**
 * Whether parsed JSON `value`, one level deep, nests more than `left` levels. Recursive, but
 * never past `left` (maxJsonDepth is capped well below the stack); walking the parsed value
 * costs about a tenth of scanning its text.
 */
function nestedDeeper(value: object, left: number): boolean {
  if (left === 0) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === 'object' && item !== null && nestedDeeper(item, left - 1)) return true;
    }
    return false;
  }
  for (const key in value) {
    const item: unknown = (value as Record<string, unknown>)[key];
    if (typeof item === 'object' && item !== null && nestedDeeper(item, left - 1)) return true;
  }
  return false;
}

/**
 * Parses a complete body, text and forms decoded by `charset` (`null`: UTF-8; JSON is always
 * UTF-8); throws HttpException(413) on a form of more than MAX_FORM_FIELDS fields,
 * HttpException(400) on a form's `__proto__` key, and on JSON {@link readJson} refuses.
 */
export function parseBody(
  kind: BodyKind,
  buf: Buffer,
  depth: number,
  charset: BodyCharset = null,
): unknown {
  if (buf.length === 0) return undefined;
  if (kind === BodyKind.Raw) return buf;
  const text = decodeBody(buf, charset);
  if (kind === BodyKind.Text) return text;
  if (kind === BodyKind.Form) {
    // querystring stops at maxKeys `&`-separated fields and drops the rest in silence: refused
    // instead, as body-parser does (413, "too many parameters").
    if (tooManyFields(text)) {
      throw new HttpException(413, `Form body has more than ${MAX_FORM_FIELDS} fields`);
    }
    const form =
      charset === null
        ? parseQuery(text, undefined, undefined, { maxKeys: MAX_FORM_FIELDS })
        : parseQuery(plusAsSpace(text, charset), undefined, undefined, {
            maxKeys: MAX_FORM_FIELDS,
            decodeURIComponent: formDecoder(charset),
          });
    // Null prototype, but `Object.assign(target, form)` would still set target's prototype to a
    // repeated `__proto__`'s array: refused as in JSON.
    if (Object.hasOwn(form, '__proto__')) {
      throw new HttpException(400, 'Form body has a forbidden __proto__ key');
    }
    return form;
  }
  const json = readJson(text, depth);
  if (json === MALFORMED_JSON) throw new HttpException(400, 'Malformed JSON body');
  if (json === FORBIDDEN_JSON_KEY) {
    throw new HttpException(
      400,
      'JSON body has a forbidden __proto__ or constructor.prototype key',
    );
  }
  if (json === JSON_TOO_DEEP) {
    throw new HttpException(400, `JSON body is nested deeper than ${depth} levels`);
  }
  return json;
}

/** Why {@link readJson} refused a text (no JSON value is a symbol). */
export const MALFORMED_JSON = Symbol('malformed');
export const FORBIDDEN_JSON_KEY = Symbol('forbidden key');
export const JSON_TOO_DEEP = Symbol('too deep');

/**
 * JSON text read by the rules of a JSON body: the value, or why it is refused. No `__proto__` or
 * `constructor.prototype` key anywhere (secure-json-parse, as Fastify does): such a text is a
 * prototype-pollution attempt on any code that merges it into another object. At most `depth`
 * levels of nesting: JSON.parse nests without limit, but JSON.stringify (an echo) and recursive
 * code overflow the stack around 4000 levels, a 500 and an onError entry per request at a
 * client's will. Also for JSON that arrives inside a body (GraphQL's `variables` string).
 */
export function readJson(
  text: string,
  depth: number,
): unknown | typeof MALFORMED_JSON | typeof FORBIDDEN_JSON_KEY | typeof JSON_TOO_DEEP {
  let json: unknown;
  try {
    json = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (err) {
    return err instanceof SyntaxError && err.message === FORBIDDEN_KEY
      ? FORBIDDEN_JSON_KEY
      : MALFORMED_JSON;
  }
  // A text of at most 2 * depth characters cannot be deeper: typical bodies are not walked.
  if (
    text.length > 2 * depth &&
    typeof json === 'object' &&
    json !== null &&
    nestedDeeper(json, depth)
  ) {
    return JSON_TOO_DEEP;
  }
  return json;
}

/**
 * Chunks of a body kept apart before small ones are merged into one Buffer. Each kept chunk costs
 * ~100 bytes of heap and, as a view, keeps its whole socket read alive: a 1 MB body sent in
 * 1-byte chunks held 197 MB. Merged only when they average under 1 KiB, so a large upload in
 * 64 KiB reads is never copied twice.
 */
const MERGE_EVERY = 256;
const SMALL_CHUNKS = MERGE_EVERY * 1024;

/** Called once per read: the parsed body, or the error to respond with, or `aborted`. */
export type BodyDone = (error: HttpException | null, body: unknown, aborted: boolean) => void;

/**
 * Reads one request body with a byte limit. One reader lives with each pooled ctx; its listeners
 * are bound once, so reading a body allocates only the chunks.
 */
export class BodyReader {
  #req: IncomingMessage | null = null;
  #kind: BodyKind = BodyKind.None;
  #limit = 0;
  #depth = 0;
  #charset: BodyCharset = null;
  #size = 0;
  #chunks: Buffer[] = [];
  /** `#chunks` before this index are merged (or large) and stay as they are. */
  #kept = 0;
  /** Bytes in `#size` of chunks before `#kept`. */
  #keptSize = 0;
  readonly #done: BodyDone;

  constructor(done: BodyDone) {
    this.#done = done;
  }

  read(req: IncomingMessage, kind: BodyKind, policy: BodyPolicy, charset: BodyCharset): void {
    const limit = policy.limit;
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > limit) {
      const expecting = req as ExpectingRequest;
      if (expecting[EXPECTS_CONTINUE] === 'pending') {
        // The client waits for 100 Continue before sending: refuse, and it sends nothing.
        expecting[EXPECTS_CONTINUE] = 'refused';
        this.#done(tooLarge(limit, true), undefined, false);
        return;
      }
      const drain = Number(declared) - limit <= DISCARD_LIMIT;
      if (drain) discardRest(req, Number(declared));
      this.#done(tooLarge(limit, !drain), undefined, false);
      return;
    }
    this.#req = req;
    this.#kind = kind;
    this.#limit = limit;
    this.#depth = policy.depth;
    this.#charset = charset;
    req.on('data', this.#onData);
    req.on('end', this.#onEnd);
    req.on('error', this.#onAbort);
    req.on('close', this.#onAbort);
  }

  #onData = (chunk: Buffer): void => {
    this.#size += chunk.length;
    if (this.#size > this.#limit) {
      const req = this.#req!;
      const limit = this.#limit;
      this.#finish();
      discardRest(req, DISCARD_LIMIT);
      this.#done(tooLarge(limit, false), undefined, false);
      return;
    }
    const chunks = this.#chunks;
    chunks.push(chunk);
    if (chunks.length - this.#kept >= MERGE_EVERY) this.#merge();
  };

  /** Merges the chunks after `#kept` into one when they are small (see MERGE_EVERY). */
  #merge(): void {
    const chunks = this.#chunks;
    const kept = this.#kept;
    if (this.#size - this.#keptSize < SMALL_CHUNKS) {
      chunks[kept] = Buffer.concat(chunks.slice(kept));
      chunks.length = kept + 1;
    }
    this.#kept = chunks.length;
    this.#keptSize = this.#size;
  }

  #onEnd = (): void => {
    const chunks = this.#chunks;
    const kind = this.#kind;
    const charset = this.#charset;
    this.#finish();
    let body: unknown;
    try {
      const buf = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      body = parseBody(kind, buf, this.#depth, charset);
    } catch (err) {
      this.#done(err as HttpException, undefined, false);
      return;
    }
    this.#done(null, body, false);
  };

  #onAbort = (): void => {
    if (this.#req === null) return;
    this.#finish();
    this.#done(null, undefined, true);
  };

  /** Removes every listener and forgets the request; safe to call twice, free when idle. */
  #finish(): void {
    const req = this.#req;
    if (req === null) return; // idle: nothing was read since the last finish
    req.off('data', this.#onData);
    req.off('end', this.#onEnd);
    req.off('error', this.#onAbort);
    req.off('close', this.#onAbort);
    this.#req = null;
    this.#charset = null;
    this.#chunks = [];
    this.#size = 0;
    this.#kept = 0;
    this.#keptSize = 0;
  }

  reset(): void {
    this.#finish();
  }
}
