import {
  type IncomingMessage,
  type ServerResponse,
  validateHeaderName,
  validateHeaderValue,
} from 'node:http';
import { endBodiless, isBodiless } from './bodiless';
import { type BodyKind, type BodyPolicy, BodyReader, closeLingering } from './body';
import type { BodyCharset } from './charset';
import { rangeError, typeError } from './checks';
import { type CompressionSettings, chooseEncoding, compressBody, type Encoding } from './compress';
import type { Context, Handler, Middleware, Next } from './context';
import { BodyTooLargeError, isHttpException, ReleasedContextError } from './errors';
import type { GraphqlRunner } from './graphql';
import { H2_INTERNAL_ERROR, resetH2 } from './h2';
import type { TrustFn } from './proxy';
import type { RawWriter } from './raw-response';
import {
  closedUnder,
  fitsQueue,
  MAX_QUEUED_BYTES,
  noop,
  type SendWatch,
  wasCut,
  wasUnsent,
  watchEnded,
  watchSend,
  whenDone,
  whileQueued,
} from './send-watch';
import { endInSlices, SLICE_BYTES, watchWrites } from './sliced-body';
import { openSseStream, type SseRegistry, type SseStream } from './sse';
import { promiseOf } from './thenable';

/** What a request's slot and ctx need from their app; implemented by the app. */
export interface SlotHost {
  readonly closing: boolean;
  readonly middleware: readonly Middleware[];
  readonly trust: TrustFn;
  readonly sse: SseRegistry;
  /** The clock and `sendTimeout` every watched response is timed with (see SendWatch). */
  readonly send: SendWatch;
  readonly graphql: GraphqlRunner;
  /** Response compression settings, or null when it is off. */
  readonly compression: CompressionSettings | null;
  /** Calls the onError handlers; a promise when one of them is async. */
  report(err: unknown, ctx: Context): Promise<void> | undefined;
  /** The request is over: back to the pool, then the onResponse hooks. */
  release(slot: Slot): void;
}

/**
 * The chain's phase (the middleware and the handler):
 *
 *   idle ─begin─► reading ─body read─► running ─returned─► settled
 *                    (no body: begin ─► running)
 *   running ─returned while a next() it did not await still runs─► waiting ─it settles─► settled
 *   reading / running / waiting ─failed─► settled (the error is the answer)
 */
type Phase = 'idle' | 'reading' | 'running' | 'waiting' | 'settled';

/**
 * The response, on its own axis: a handler usually answers before its chain returns.
 *
 *   open ─json / send / redirect / error / file written─► sent
 *   open ─sseStream()─► streaming ─the stream ends─► sent
 *   open ─the chain settled with headers written through ctx.res─► raw ─the response closes─► sent
 *   any ─the client left mid-body─► sent
 *
 * Async response operations (sendFile, graphql, compression) are counted in `busy` besides.
 */
type Answer = 'open' | 'streaming' | 'raw' | 'sent';

const RESOLVED: Promise<unknown> = Promise.resolve();
const NONE = null as never;
/** `lost` holds no error. */
const NO_LOSS = Symbol('no loss');
// RFC 8259 §11: application/json has no charset parameter (JSON is UTF-8); the spec names this value.
export const JSON_TYPE = 'application/json';
const INTERNAL_ERROR = { status: 500, error: 'Internal Server Error' };
const INTERNAL_ERROR_JSON = JSON.stringify(INTERNAL_ERROR);
/** Two errors of one cause: the same class and message (never throws, whatever they are). */
function sameFailure(a: unknown, b: unknown): boolean {
  try {
    return (
      a instanceof Error &&
      b instanceof Error &&
      a.constructor === b.constructor &&
      a.message === b.message
    );
  } catch {
    // A revoked Proxy, a throwing getter: told apart, so both are reported.
    return false;
  }
}

/** Headers that describe a success's body, dropped from the error response that replaces it. */
const REPRESENTATION_HEADER =
  /^(?:content-(?:encoding|disposition|language|location|range)|cache-control|expires|etag|last-modified|accept-ranges)$/;

/**
 * An HttpException below 500: answered, not reported. Never throws, whatever was thrown (a
 * revoked Proxy throws on `instanceof`): the error path runs where a throw ends the process.
 */
function isClientError(err: unknown): boolean {
  try {
    return isHttpException(err) && err.status < 500;
  } catch {
    return false;
  }
}

/**
 * Throws naming the header when Node would refuse it: a TypeError for a value that is not a
 * string or number, a RangeError for a name or value Node's checks refuse (CR/LF, ...).
 */
function checkHeader(name: string, value: unknown): void {
  const what = `headers[${JSON.stringify(name)}]`;
  const expected = 'a header value Node can send';
  if (typeof value !== 'string' && typeof value !== 'number')
    throw typeError(what, expected, value);
  try {
    validateHeaderName(name);
    validateHeaderValue(name, String(value));
  } catch (err) {
    throw rangeError(what, expected, value, err);
  }
}

/**
 * One request's life, pooled: the chain, the response and the release. Its bookkeeping, the
 * body reader and the callbacks are bound once, so a request allocates no closures for them.
 * Each request gets its own {@link Context} bound to the slot's generation; the generation moves
 * on at release, which makes every ctx of an earlier request stale: it keeps reading its own
 * request, and cannot respond through the slot again.
 *
 * Every change of `phase` and `answer` happens in this file. The slot is released when the
 * chain has settled, the response is sent and no async response operation is running.
 */
export class Slot implements RawWriter {
  readonly host: SlotHost;
  /** Bumped at each release; a ctx compares it with the generation it was made for. */
  #gen = 0;
  #phase: Phase = 'idle';
  #answer: Answer = 'open';
  /** The ctx of the current request. */
  #face: Context = NONE;
  #handler: Handler = NONE;
  /** The route's `maxJsonDepth` (the app's on a miss), for GraphQL variables sent as a string. */
  #jsonDepth = 1;
  /** `next` for middleware, made per request so a kept `next` cannot drive a later chain. */
  #next: Next = NONE;
  /** Middleware cursor. */
  #i = -1;
  /** `next()` promises not yet settled. */
  #pendingNext = 0;
  /** Async response operations still running (they nest: a GraphQL answer can be compressed). */
  #busy = 0;
  #stream: SseStream | null = null;
  /** The status of the next response operation (`ctx.status()`). */
  #status = 200;
  /**
   * The first error of work the chain may not have observed (a detached `next()`, an unawaited
   * sendFile): answered if the chain ends without a response.
   */
  #lost: unknown = NO_LOSS;
  /**
   * The response was ended but closed before it finished ({@link #judgeCut}): known on the slow
   * paths only (a stream, a file, a response written through ctx.res, an event stream's tail),
   * never judged for a small reply.
   */
  #cut = false;
  /**
   * Stops watching a response the handler writes through ctx.res (its client's progress, its
   * queue) and slicing its writes; `noop` while none is watched.
   */
  #unwatch: () => void = noop;
  readonly #reader: BodyReader;
  readonly #onFulfilled: () => void;
  readonly #onRejected: (err: unknown) => void;
  readonly #onStreamEnd: (stream: SseStream) => void;
  readonly #onResClose: () => void;
  /** A large buffered body is written (or its response closed). */
  readonly #onSlicesDone: () => void;

  constructor(host: SlotHost) {
    this.host = host;
    this.#onFulfilled = () => this.#returned();
    this.#onRejected = (err) => this.#fail(err);
    this.#onStreamEnd = (stream) => {
      if (this.#stream !== stream) return; // a stale stream of an earlier request
      this.#sent();
      const res = this.#face.res;
      // Ended by the server: finished only if its queued tail reaches the socket.
      if (res.writableEnded && !res.destroyed) this.#watchTail(res);
      else this.#maybeRelease();
    };
    this.#onResClose = () => {
      // Node's 'close' comes from its connection's closing when the response was cut, and a tick
      // after 'finish' when it finished: the connection is then still open.
      this.#judgeCut();
      this.#sent();
      this.#maybeRelease();
    };
    this.#onSlicesDone = () => {
      this.#busy--;
      this.#maybeRelease();
    };
    this.#reader = new BodyReader((err, body, aborted) => this.#bodyRead(err, body, aborted));
  }

  get gen(): number {
    return this.#gen;
  }

  /** The ctx of the current request (the last one, after release). */
  get face(): Context {
    return this.#face;
  }

  /** The response was ended but did not finish (see {@link #judgeCut}). */
  get cut(): boolean {
    return this.#cut;
  }

  /** The status the next response operation sends. */
  get status(): number {
    return this.#status;
  }

  // ── The chain ──────────────────────────────────────────────────────────────────────────────

  /** The current request's route `maxJsonDepth`. */
  get jsonDepth(): number {
    return this.#jsonDepth;
  }

  /** Binds the slot to a request. */
  begin(face: Context, handler: Handler, jsonDepth: number): void {
    this.#face = face;
    this.#handler = handler;
    this.#jsonDepth = jsonDepth;
    this.#phase = 'running';
    if (this.host.middleware.length > 0) {
      const gen = this.#gen;
      this.#next = () => this.#callNext(gen, face);
    }
  }

  /** Reads the body first; the chain runs once it is parsed. */
  read(req: IncomingMessage, kind: BodyKind, policy: BodyPolicy, charset: BodyCharset): void {
    this.#phase = 'reading';
    this.#reader.read(req, kind, policy, charset);
  }

  #bodyRead(err: Error | null, body: unknown, aborted: boolean): void {
    if (this.#phase !== 'reading') return;
    if (aborted) {
      // The client went away mid-body: nobody to answer.
      this.abandon();
    } else if (err !== null) {
      // Through the chain, as a 404 is: middleware (cors, logging) sees the request and its
      // headers go on the answer; the final handler throws the body's error instead of the route.
      this.#handler =
        this.host.graphql.refusedBody(err, this.#face.req.headers.accept) ??
        (() => {
          throw err;
        });
      this.#phase = 'running';
      this.run();
    } else {
      this.#face.body = body;
      this.#phase = 'running';
      this.run();
    }
  }

  /** Ends a request whose client is gone before its chain ran: nothing runs or is answered. */
  abandon(): void {
    this.#phase = 'settled';
    this.#sent();
    this.#maybeRelease();
  }

  /** Runs middleware and handler as one chain; one try/catch for the whole chain. */
  run(): void {
    let promise: Promise<unknown> | null;
    try {
      promise = promiseOf(
        this.host.middleware.length === 0 ? this.#handler(this.#face) : this.#dispatch(),
      );
    } catch (err) {
      this.#fail(err);
      return;
    }
    if (promise !== null) promise.then(this.#onFulfilled, this.#onRejected);
    else this.#returned();
  }

  /** Runs the next middleware, or the route handler after the last one. */
  #dispatch(): unknown {
    const i = ++this.#i;
    const middleware = this.host.middleware;
    if (i < middleware.length) return middleware[i]!(this.#face, this.#next);
    if (i === middleware.length) return this.#handler(this.#face);
    throw new Error('keel: next() was called more than once');
  }

  /**
   * `next()`: the rest of the chain. Its promise is always observed here, so a middleware that
   * neither returns nor awaits it cannot leave an unhandled rejection; while it runs, the chain
   * is not finished (phase `waiting`), so the handler's answer is still awaited.
   */
  #callNext(gen: number, face: Context): Promise<unknown> {
    if (this.#gen !== gen) {
      this.host.report(new ReleasedContextError('next()'), face);
      return RESOLVED;
    }
    const promise = promiseOf(this.#dispatch());
    if (promise === null) return RESOLVED;
    this.#pendingNext++;
    promise.then(
      () => this.#nextSettled(gen, face, false, undefined),
      (err: unknown) => this.#nextSettled(gen, face, true, err),
    );
    return promise;
  }

  #nextSettled(gen: number, face: Context, failed: boolean, err: unknown): void {
    if (this.#gen !== gen) {
      // The request was answered and released before this work ended: nobody awaits it.
      if (failed) this.host.report(err, face);
      return;
    }
    this.#pendingNext--;
    if (failed) this.#lose(err);
    if (this.#pendingNext === 0 && this.#phase === 'waiting') {
      this.#phase = 'running';
      if (failed) this.#fail(err);
      else this.#returned();
    }
  }

  /** Keeps the first error of work the chain may not observe. */
  #lose(err: unknown): void {
    if (this.#lost === NO_LOSS) this.#lost = err;
  }

  /** The chain returned: release now, or when the response / stream finishes. */
  #returned(): void {
    if (this.#phase !== 'running') return;
    if (this.#pendingNext > 0) {
      // A middleware returned without awaiting next(): the rest of the chain still runs.
      this.#phase = 'waiting';
      return;
    }
    this.#phase = 'settled';
    if (this.#answer !== 'open' || this.#busy > 0) {
      this.#maybeRelease();
      return;
    }
    const res = this.#face.res;
    // Ended by the handler: over, unless it is watched (it wrote while it awaited) and its tail
    // is still queued: then held, as below, until it finished or was cut.
    if (res.writableEnded && (this.#unwatch === noop || res.writableFinished)) {
      // Ended in one piece: its connection watched as keel's own small replies' are, should its
      // client read none of them (a pipelined backlog); two property reads when it reads.
      if (this.#unwatch === noop) watchEnded(res, this.host.send);
      this.#sent();
      this.#maybeRelease();
    } else if (res.headersSent) {
      // The handler streams through ctx.res itself: release when that response closes (at once
      // when the client left already: its 'close' has fired).
      this.#answer = 'raw';
      if (res.destroyed) this.#onResClose();
      else {
        res.on('close', this.#onResClose);
        // Left to run (`src.pipe(ctx.res)`), and not written to yet: watched from now on.
        if (this.#unwatch === noop) this.#watchRaw(res);
      }
    } else if (this.#lost !== NO_LOSS) {
      // Work the chain did not await failed (e.g. an unawaited sendFile): that is the answer.
      this.#fail(this.#lost);
    } else if (res.destroyed) {
      // The client left and the handler gave up (a long poll, a render aborted on close):
      // nobody is there to answer, so nothing was missed.
      this.#onResClose();
    } else {
      const { method, path } = this.#face;
      this.#fail(
        new Error(
          `keel: the handler for ${method} ${path} sent no response (a returned value is not ` +
            'sent: return ctx.json(value), ctx.send(...) or another ctx response)',
        ),
      );
    }
  }

  /** Errors: an HttpException is its status; anything else goes to onError, then a bare 500. */
  #fail(err: unknown): void {
    if (this.#phase === 'idle') return;
    this.#phase = 'settled';
    const res = this.#face.res;
    if (res.destroyed && (err === this.#face.req.errored || closedUnder(res, err))) {
      // The upload's own error (ECONNRESET "aborted"), seen by a handler reading ctx.req, or the
      // premature close of a pipe into a response that was cut (`sendTimeout`) or whose client
      // left: the client is gone, as when a handler gives up on a closed response. Nobody to
      // answer, nothing to report (a client could otherwise add a log entry per stall).
      this.#onResClose();
      return;
    }
    if (!isClientError(err)) {
      const pending = this.host.report(err, this.#face);
      if (pending !== undefined) {
        const gen = this.#gen;
        // An async onError may never settle: should the response close meanwhile (the client
        // left, or onError answered through ctx), the request is over then; closed already (a
        // handler that threw after its client left), it is over now: onError runs on, and its
        // late answer is a stale no-op. Error path only.
        const closed = (): void => {
          if (this.#gen === gen) this.#onResClose();
        };
        if (res.destroyed) closed();
        else res.once('close', closed);
        void pending.then(() => {
          res.off('close', closed);
          if (this.#gen === gen) this.#respondError(err);
        });
        return;
      }
    }
    this.#respondError(err);
  }

  /**
   * A response the handler writes through ctx.res: written as ctx.send(stream) writes, in slices
   * a slow client shows progress on, and cut after `sendTimeout` if its client stops taking it;
   * queued behind another response, it closes with its connection (Node gives it no 'close'
   * then). Once per such response, so its allocations are off the request path.
   */
  #watchRaw(res: ServerResponse): void {
    this.#unwatch = watchWrites(res, this.host.send);
  }

  /**
   * The first write of this request's response, told by the response (`KeelServerResponse`):
   * when it is the handler's own (no response operation of keel's is answering), the response
   * is watched from this write on, also while the chain still awaits (`await pipeline(src,
   * ctx.res)`), where nothing else would end it for a client that stopped reading.
   */
  rawWrite(res: ServerResponse): boolean {
    if (
      this.#phase === 'idle' ||
      this.#face.res !== res ||
      res.destroyed ||
      this.#answer !== 'open' ||
      this.#busy > 0 ||
      this.#stream !== null ||
      this.#unwatch !== noop
    ) {
      return false;
    }
    this.#watchRaw(res);
    return true;
  }

  /** Stops watching a response the handler writes through ctx.res (its close, its queue). */
  #unwatchRaw(): void {
    if (this.#answer === 'raw') this.#face.res.off('close', this.#onResClose);
    if (this.#unwatch !== noop) {
      this.#unwatch();
      this.#unwatch = noop;
    }
  }

  /**
   * Notes whether the response was cut: ended, and its connection destroyed before all of it was
   * handed to the kernel. Called when the response's writer is done with it (its 'close', the end
   * of a stream's, a file's or an event stream's tail): Node emits 'close' a tick after 'finish'
   * on a connection that stays, and 'finish' also on a connection destroyed with the tail still
   * queued, so the connection tells, unless the finish was noted before it closed (see wasCut).
   */
  #judgeCut(): void {
    this.#cut = wasCut(this.#face.res);
  }

  /** The response is over (the only way `answer` becomes `sent`). */
  #sent(): void {
    this.#unwatchRaw();
    this.#answer = 'sent';
  }

  #maybeRelease(): void {
    if (this.#phase === 'settled' && this.#answer === 'sent' && this.#busy === 0) {
      this.host.release(this);
    }
  }

  // ── The response ───────────────────────────────────────────────────────────────────────────

  /**
   * Holds the request until the tail of an ended event stream is written (finished) or cut
   * (`sendTimeout`, the client left: finished false), as a streamed body is held. Once per
   * stream, so its allocations are off the request path.
   */
  #watchTail(res: ServerResponse): void {
    this.#busy++;
    const unwatch = watchSend(res, this.host.send);
    void whenDone(res).then(() => {
      unwatch();
      this.#judgeCut();
      this.#busy--;
      this.#maybeRelease();
    });
  }

  /**
   * A live request answers once. An async response operation still under way (sendFile,
   * graphql: `busy`) is that answer: a second one would race it, and the loser be dropped.
   * `own`: the caller's own operations counted in `busy` (graphql writing its result).
   */
  assertCanRespond(own = 0): void {
    const res = this.#face.res;
    // Not a head keel made for it (an HTTP/2 408, see h2-request): the response is just gone.
    if (this.#answer !== 'open' || this.#busy > own || (res.headersSent && !wasUnsent(res))) {
      throw new Error('keel: a response was already sent for this request');
    }
  }

  setStatus(status: number): void {
    this.#status = status;
  }

  /** Every buffered response goes out through here; `own` as for {@link assertCanRespond}. */
  end(contentType: string | null, body: string | Uint8Array | null, own = 0): void {
    this.assertCanRespond(own);
    const face = this.#face;
    const res = face.res;
    if (res.destroyed) {
      // The client left: nothing is written, so onResponse tells status 0, not finished.
      this.#sent();
      return;
    }
    const status = this.#status;
    // While the app closes, tell keep-alive clients this connection ends with this response.
    if (this.host.closing) res.shouldKeepAlive = false;
    if (isBodiless(status)) {
      endBodiless(res, status, ['x-request-id', face.requestId], this.host.send);
      this.#sent();
      return;
    }
    const length =
      body === null ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
    const compression = this.host.compression;
    if (compression !== null && body !== null) {
      const encoding = chooseEncoding(compression, face.req, res, contentType, length);
      if (encoding !== null) {
        if (face.method === 'HEAD') this.#writeEncodedHead(face, status, contentType, encoding);
        // Waiting behind another response: counted (by its uncompressed length) before it is
        // compressed off the loop, so a pipelined backlog past the cap compresses nothing more.
        else if (!fitsQueue(res, this.host.send, length)) this.#sent();
        else this.#compress(compression, encoding, contentType, body);
        return;
      }
    }
    this.#write(face, this.#status, contentType, body, length, null);
    this.#sent();
  }

  /**
   * Writes the head and the body (a HEAD request gets the head only). A body over SLICE_BYTES
   * goes out in watched slices (`sendTimeout`); the length test is all smaller ones pay.
   */
  #write(
    face: Context,
    status: number,
    contentType: string | null,
    body: string | Uint8Array | null,
    length: number,
    encoding: Encoding | null,
  ): void {
    const res = face.res;
    const head =
      contentType === null
        ? ['content-length', String(length), 'x-request-id', face.requestId]
        : [
            'content-type',
            contentType,
            'content-length',
            String(length),
            'x-request-id',
            face.requestId,
          ];
    if (encoding !== null) head.push('content-encoding', encoding);
    res.writeHead(status, head);
    if (body === null || face.method === 'HEAD') res.end();
    else if (length <= SLICE_BYTES) res.end(body);
    else {
      this.#endInSlices(face, body, length);
      return;
    }
    watchEnded(res, this.host.send);
  }

  /**
   * A body over SLICE_BYTES: the request is over (release, onResponse) once it is written or the
   * response closed, as for a file; until then the slot counts it as busy.
   */
  #endInSlices(face: Context, body: string | Uint8Array, length: number): void {
    // Written after a compression whose request is gone: nothing to hold.
    if (face !== this.#face) {
      endInSlices(face.res, body, length, this.host.send, noop);
      return;
    }
    this.#busy++;
    endInSlices(face.res, body, length, this.host.send, this.#onSlicesDone);
  }

  /**
   * HEAD of a response GET would compress: the same fields (RFC 9110 §9.3.2), Content-Encoding
   * included, but no Content-Length: the compressed length is known only by compressing, which
   * HEAD would pay for a body it never sends (§9.3.2 lets such a field be left out). The length
   * of the uncompressed body would be wrong for the representation GET sends (§8.6).
   */
  #writeEncodedHead(
    face: Context,
    status: number,
    contentType: string | null,
    encoding: Encoding,
  ): void {
    const head = ['content-encoding', encoding, 'x-request-id', face.requestId];
    if (contentType !== null) head.push('content-type', contentType);
    // The length of the compressed body GET would send is not known: none, rather than one a
    // handler set for the uncompressed body (RFC 9110 §8.6: HEAD's must equal GET's).
    face.res.removeHeader('content-length');
    face.res.writeHead(status, head);
    face.res.end();
    watchEnded(face.res, this.host.send);
    this.#sent();
  }

  /**
   * Compresses off the event loop, then writes. The response counts as sent at once (a second
   * response operation is refused) and the slot stays busy until it is written.
   */
  #compress(
    settings: CompressionSettings,
    encoding: Encoding,
    contentType: string | null,
    body: string | Uint8Array,
  ): void {
    this.#sent();
    this.#busy++;
    const face = this.#face;
    const status = this.#status;
    const gen = this.#gen;
    compressBody(settings, encoding, body, (err, out) => {
      // busy > 0 holds the slot, so the generation is still this request's.
      const live = this.#gen === gen;
      if (live) this.#busy--;
      try {
        // The client left meanwhile: nothing is written (onResponse: status 0).
        if (face.res.destroyed) return;
        if (err === null) this.#write(face, status, contentType, out, out.byteLength, encoding);
        else this.#write(face, status, contentType, body, Buffer.byteLength(body), null);
      } catch (writeErr) {
        this.host.report(writeErr, face);
        // Before the head went out (a header Node's HTTP/2 layer refuses): the bare 500, as on
        // the uncompressed path; after, the stream is reset or the connection cut, never ended
        // as if complete.
        if (live) this.#bareError();
        else {
          resetH2(face.res, H2_INTERNAL_ERROR);
          face.res.destroy();
        }
      } finally {
        if (live) this.#maybeRelease();
      }
    });
  }

  /**
   * Follows an async response operation (sendFile, graphql). If the handler did not await it and
   * it fails after the chain finished, the error is answered here.
   */
  track(work: Promise<void>): Promise<void> {
    const gen = this.#gen;
    this.#busy++;
    work.then(
      () => {
        if (this.#gen !== gen) return;
        this.#busy--;
        // A stream or file resolves once its tail finished or was cut (see whenDone).
        this.#judgeCut();
        this.#sent();
        this.#maybeRelease();
      },
      (err: unknown) => {
        if (this.#gen !== gen) return;
        this.#busy--;
        if (this.#phase === 'settled') this.#fail(err);
        else this.#lose(err); // the chain may await it; if it ends without a response, this answers
      },
    );
    return work;
  }

  /**
   * Opens the request's event stream. HEAD gets the headers only (an open stream would hold the
   * keep-alive socket forever); while the app closes, a new stream ends at once too.
   */
  openStream(): SseStream {
    this.assertCanRespond();
    const face = this.#face;
    // What a close listener throws is this request's error (one closure per stream, not per request).
    const report = (err: unknown): void => void this.host.report(err, face);
    const stream = openSseStream(face.res, this.host.sse, ['x-request-id', face.requestId], report);
    this.#stream = stream;
    this.#answer = 'streaming';
    // Queued behind an earlier response of its connection (pipelined), it gets no 'close' from
    // Node when that connection closes: ended with it, or it would stay open for ever. Stopped
    // before #onStreamEnd runs, whose tail watch takes over the same watch.
    const ending = face.method === 'HEAD' || this.host.closing;
    let fits = true;
    if (face.res.socket === null && !face.res.destroyed) {
      stream.onClose(whileQueued(face.res, face.req.socket));
      // It counts what it may buffer (at most a quarter of the cap) toward its connection's cap
      // on queued replies: behind an event stream nothing is ever answered, and 2000 pipelined
      // streams buffered for ever. One that ends at once (HEAD, closing) holds nothing.
      if (!ending) {
        const holds = Math.min(this.host.sse.options.maxBufferedBytes, MAX_QUEUED_BYTES / 4);
        fits = fitsQueue(face.res, this.host.send, holds);
      }
    }
    stream.onClose(this.#onStreamEnd);
    if (ending || !fits) {
      if (this.host.closing) face.res.shouldKeepAlive = false;
      stream.close();
    }
    return stream;
  }

  // ── Errors ─────────────────────────────────────────────────────────────────────────────────

  /**
   * Answers an error. Never throws: it runs inside promise reactions and the request listener,
   * where a throw would end the process. Whatever goes wrong here is reported, and the client
   * gets a bare 500 (or, with headers already out, a closed connection).
   */
  #respondError(err: unknown): void {
    try {
      this.#writeError(err);
    } catch (secondary) {
      // The error response failing as the handler's answer did (a header Node refuses, still
      // set): one report of it, not two.
      if (!sameFailure(secondary, err)) this.host.report(secondary, this.#face);
      this.#bareError();
    }
  }

  #writeError(err: unknown): void {
    const res = this.#face.res;
    if (this.#stream !== null) {
      this.#stream.close(); // releases the slot through the stream's close listener
      return;
    }
    if (this.#busy > 0) return; // an async response op is still answering; it releases the slot
    if (this.#answer === 'sent' || res.writableEnded) {
      this.#sent();
      this.#maybeRelease();
      return;
    }
    if (res.headersSent) {
      this.#bareError();
      return;
    }
    // An error is no representation of the resource: what the handler set for its success
    // (freshness, validators, content coding: an immutable 500 a CDN keeps, a JSON error
    // labelled gzip) goes. Cookies and the app's own headers (CORS) stay.
    for (const name of res.getHeaderNames()) {
      if (REPRESENTATION_HEADER.test(name)) res.removeHeader(name);
    }
    let status = 500;
    let body: unknown = INTERNAL_ERROR;
    if (isHttpException(err)) {
      // Check every header before setting any, so a bad one leaves no partial set behind.
      const headers = err.headers === undefined ? [] : Object.entries(err.headers);
      for (const [name, value] of headers) checkHeader(name, value);
      for (const [name, value] of headers) res.setHeader(name, value);
      status = err.status;
      body = err.toJSON();
      // An oversize body is drained so the client can read the 413, unless it is far too big
      // (or a handler that threw it says so).
      if (err instanceof BodyTooLargeError && err.closeConnection) {
        closeLingering(this.#face.req, res, this.host.send.clock);
      }
    }
    this.#status = status;
    this.end(JSON_TYPE, JSON.stringify(body));
    this.#maybeRelease();
  }

  /**
   * The last resort: a plain 500 with none of the headers set so far, or, when part of the
   * response is already out, the end of the connection rather than its reuse.
   */
  #bareError(): void {
    const res = this.#face.res;
    try {
      if (!res.headersSent) {
        for (const name of res.getHeaderNames()) res.removeHeader(name);
        this.#status = 500;
        this.#answer = 'open';
        this.end(JSON_TYPE, INTERNAL_ERROR_JSON);
      } else if (!res.writableEnded) {
        // Never `res.end()`: its last chunk would make the truncated body look complete (and
        // the connection reusable). What was written is flushed, then the connection closes;
        // a response still queued behind another has nothing out to flush.
        // HTTP/2: `res.socket` is the stream's proxy, whose `end()` ends the stream as complete.
        const socket = res.socket;
        if (resetH2(res, H2_INTERNAL_ERROR) || socket === null) res.destroy();
        else socket.end();
      }
    } catch {
      res.destroy();
    }
    this.#sent();
    this.#maybeRelease();
  }

  // ── Release ────────────────────────────────────────────────────────────────────────────────

  /** Clears every per-request field; the slot goes back to the pool after this. */
  reset(): void {
    this.#unwatchRaw();
    this.#reader.reset();
    this.#gen++;
    this.#phase = 'idle';
    this.#answer = 'open';
    this.#face = NONE;
    this.#handler = NONE;
    this.#next = NONE;
    this.#i = -1;
    this.#pendingNext = 0;
    this.#busy = 0;
    this.#stream = null;
    this.#status = 200;
    this.#lost = NO_LOSS;
    this.#cut = false;
  }
}
