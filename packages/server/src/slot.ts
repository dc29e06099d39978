import { BodyReader } from './body';
import type { CompressionSettings } from './compress';
import type { Context, Handler, Middleware, Next } from './context';
import { ReleasedContextError } from './errors';
import type { GraphqlRunner } from './graphql';
import type { TrustFn } from './proxy';
import type { SseRegistry, SseStream } from './sse';

/** What a request's slot and ctx need from their app; implemented by the app's dispatcher. */
export interface SlotHost {
  readonly closing: boolean;
  readonly middleware: readonly Middleware[];
  readonly trust: TrustFn;
  readonly sse: SseRegistry;
  readonly graphql: GraphqlRunner;
  /** Response compression settings, or null when it is off. */
  readonly compression: CompressionSettings | null;
  chainDone(slot: Slot): void;
  fail(slot: Slot, err: unknown): void;
  bodyDone(slot: Slot, err: Error | null, body: unknown, aborted: boolean): void;
  maybeRelease(slot: Slot): void;
  report(err: unknown, ctx: Context): void;
}

const RESOLVED: Promise<unknown> = Promise.resolve();
const NONE = null as never;

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}

/**
 * The pooled part of a request: bookkeeping, the body reader and callbacks bound once, so a
 * request allocates no closures for them. Each request gets its own {@link Context} bound to the
 * slot's generation; the generation moves on at release, which makes every ctx of an earlier
 * request stale: it keeps reading its own request, and cannot respond through the slot again.
 *
 * Release needs three things: the chain settled (`chainDone`), the response finished or the
 * stream closed (`resDone`), and no async response operation running (`busy` at 0).
 */
export class Slot {
  readonly host: SlotHost;
  /** Bumped at each release; a ctx compares it with the generation it was made for. */
  gen = 0;
  live = false;
  /** The ctx of the current request. */
  face: Context = NONE;
  handler: Handler = NONE;
  /** `next` for middleware, made per request so a kept `next` cannot drive a later chain. */
  next: Next = NONE;
  /** Middleware cursor. */
  i = -1;
  chainDone = false;
  /** The chain returned while a `next()` it did not await was still running. */
  chainWaiting = false;
  /** `next()` promises not yet settled. */
  pendingNext = 0;
  resDone = false;
  /**
   * Async response operations still running (sendFile, graphql, compression): a count, since
   * they nest (a GraphQL answer can be compressed).
   */
  busy = 0;
  stream: SseStream | null = null;
  /** `onResClose` is registered on the response. */
  watchingClose = false;
  /** The body reader was used for this request. */
  reading = false;
  /**
   * An error from work the chain may not have observed (a detached `next()`, an unawaited
   * sendFile): answered if the chain ends without a response.
   */
  lost: unknown = undefined;
  hasLost = false;
  readonly reader: BodyReader;
  readonly onFulfilled: () => void;
  readonly onRejected: (err: unknown) => void;
  readonly onStreamEnd: (stream: SseStream) => void;
  readonly onResClose: () => void;

  constructor(host: SlotHost) {
    this.host = host;
    this.onFulfilled = () => host.chainDone(this);
    this.onRejected = (err) => host.fail(this, err);
    this.onStreamEnd = (stream) => {
      if (this.stream !== stream) return; // a stale stream of an earlier request
      this.resDone = true;
      host.maybeRelease(this);
    };
    this.onResClose = () => {
      this.face.res.off('close', this.onResClose);
      this.watchingClose = false;
      this.resDone = true;
      host.maybeRelease(this);
    };
    this.reader = new BodyReader((err, body, aborted) => host.bodyDone(this, err, body, aborted));
  }

  /** Binds the slot to a request. */
  begin(face: Context, handler: Handler): void {
    this.face = face;
    this.handler = handler;
    this.live = true;
    if (this.host.middleware.length > 0) {
      const gen = this.gen;
      this.next = () => this.#callNext(gen, face);
    }
  }

  /** Runs the next middleware, or the route handler after the last one. */
  dispatch(): unknown {
    const i = ++this.i;
    const middleware = this.host.middleware;
    if (i < middleware.length) return middleware[i]!(this.face, this.next);
    if (i === middleware.length) return this.handler(this.face);
    throw new Error('next() was called more than once');
  }

  /**
   * `next()`: the rest of the chain. Its promise is always observed here, so a middleware that
   * neither returns nor awaits it cannot leave an unhandled rejection; while it runs, the chain
   * is not finished (see `chainWaiting`), so the handler's answer is still awaited.
   */
  #callNext(gen: number, face: Context): Promise<unknown> {
    if (this.gen !== gen) {
      this.host.report(new ReleasedContextError('next()'), face);
      return RESOLVED;
    }
    const result = this.dispatch();
    if (!isThenable(result)) return RESOLVED;
    this.pendingNext++;
    result.then(
      () => this.#nextSettled(gen, face, false, undefined),
      (err: unknown) => this.#nextSettled(gen, face, true, err),
    );
    return result as Promise<unknown>;
  }

  #nextSettled(gen: number, face: Context, failed: boolean, err: unknown): void {
    if (this.gen !== gen) {
      // The request was answered and released before this work ended: nobody awaits it.
      if (failed) this.host.report(err, face);
      return;
    }
    this.pendingNext--;
    if (failed) this.lose(err);
    if (this.pendingNext === 0 && this.chainWaiting) {
      this.chainWaiting = false;
      if (failed) this.host.fail(this, err);
      else this.host.chainDone(this);
    }
  }

  /** Keeps the first error of work the chain may not observe. */
  lose(err: unknown): void {
    if (this.hasLost) return;
    this.hasLost = true;
    this.lost = err;
  }

  /** Clears every per-request field; the slot goes back to the pool after this. */
  reset(): void {
    if (this.watchingClose) this.face.res.off('close', this.onResClose);
    if (this.reading) this.reader.reset();
    this.gen++;
    this.live = false;
    this.face = NONE;
    this.handler = NONE;
    this.next = NONE;
    this.i = -1;
    this.chainDone = false;
    this.chainWaiting = false;
    this.pendingNext = 0;
    this.resDone = false;
    this.busy = 0;
    this.stream = null;
    this.watchingClose = false;
    this.reading = false;
    this.lost = undefined;
    this.hasLost = false;
  }
}
