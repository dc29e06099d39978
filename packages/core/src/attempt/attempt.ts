import { CancelledError, isCancelledError } from '../errors/cancelled-error';
import { isResponseTooLargeError } from '../errors/response-too-large-error';
import { isTimeoutError, TimeoutError } from '../errors/timeout-error';
import { type Clock, type TimerHandle, timerDelay } from '../internal/clock';
import { noop } from '../internal/noop';
import { isStreamBody } from '../request/body';
import type { RequestSpec } from '../request/resolve';
import type { ApiResponse } from '../types/client';
import type { FetchLike } from '../types/options';
import { attemptError } from './attempt-error';
import { readResponse } from './read-body';
import { isSuccessStatus } from './status';

/**
 * What an attempt runs under: the flight, which may be aborted at any moment (its last caller
 * left, a group cancel, cancelAll). A direct callback rather than an AbortSignal listener: Node's
 * EventTarget makes a listener added and removed per attempt, and a second AbortController per
 * flight, a measurable share of a request (bench/scheduler.bench.mjs).
 */
export interface AbortSource {
  readonly aborted: boolean;
  readonly reason: unknown;
  /** Set by the running attempt, cleared when it ends; the source calls it on abort. */
  onAbort: ((reason: unknown) => void) | undefined;
}

/**
 * One network attempt: fetch, then read the body, under an optional per-attempt timeout.
 * Rejects with TimeoutError when the timeout fires, CancelledError when the source aborts,
 * HttpError for a non-2xx status, ParseError for a malformed JSON body, or what `attemptError`
 * makes of the fetch implementation's error (NetworkError, a transport TimeoutError).
 *
 * Each attempt has its own AbortController, the signal fetch gets: the timeout or the source's
 * abort aborts it. The fetch promise is raced against the abort, so even a fetch implementation
 * that ignores its signal cannot keep a cancelled or timed-out request pending. The controller is
 * made when the fetch reads `init.signal` (an own getter, so a wrapper spreading `init` still
 * passes it on), already aborted if the attempt ended before: a fetch that never reads it (a
 * stub, a cache, an in-process handler) costs no AbortSignal, the largest allocation of an
 * attempt in Node (bench/scheduler.bench.mjs).
 */
export function attemptOnce(
  fetchImpl: FetchLike,
  spec: RequestSpec,
  source: AbortSource,
  clock: Clock,
  timeout: number,
): Promise<ApiResponse> {
  if (source.aborted) return Promise.reject(asCancel(source.reason, spec));
  return new Promise<ApiResponse>((resolve, reject) => {
    let done = false;
    let timer: TimerHandle | undefined;
    let controller: AbortController | undefined;
    /** Set once the attempt is aborted: a signal read after that is made aborted. */
    let abortedBy: { reason: unknown } | undefined;
    /**
     * Ends the attempt with `settle(value)`; a clock whose clearTimeout throws ends it with that
     * error instead (no KeelError: the client fails the flight with it, no retry).
     */
    const finish = (settle: (value: never) => void, value: unknown) => {
      done = true;
      source.onAbort = undefined;
      try {
        if (timer !== undefined) clock.clearTimeout(timer);
        settle(value as never);
      } catch (error) {
        reject(error);
      }
    };
    /** Stops a body being read by keel's own reader (read-body BodyCut). */
    let cutBody: ((reason: unknown) => void) | undefined;
    const abortFetch = (reason: unknown) => {
      abortedBy = { reason };
      controller?.abort(reason);
      cutBody?.(reason);
    };
    const abort = (reason: unknown) => {
      if (done) return;
      finish(reject, asCancel(reason, spec));
      abortFetch(reason);
    };
    source.onAbort = abort;
    if (timeout > 0) {
      timer = clock.setTimeout(
        () => abort(new TimeoutError(spec, { timeout })),
        timerDelay(timeout),
      );
    }

    let started: Promise<Response>;
    const init: RequestInit = {
      method: spec.method,
      // A copy per attempt: a fetch may change what it is handed (an interceptor adding a
      // header), and the spec's headers are the client's defaults, shared by every request.
      headers: { ...spec.headers },
      body: spec.body,
      get signal(): AbortSignal {
        if (controller === undefined) {
          controller = new AbortController();
          if (abortedBy !== undefined) controller.abort(abortedBy.reason);
        }
        return controller.signal;
      },
    };
    try {
      // A stream body is sent as it is read: fetch requires saying so (and refuses it otherwise).
      if (isStreamBody(spec.body)) (init as { duplex?: 'half' }).duplex = 'half';
      // credentials, redirect, mode, cache, ... as the client and request set them.
      if (spec.fetchInit !== undefined) Object.assign(init, spec.fetchInit);
      // A Response returned as it is (no promise) is answered; a value whose `then` throws fails
      // like a rejection. A native promise comes back as it is (no allocation).
      started = Promise.resolve(fetchImpl(spec.fetchURL, init));
    } catch (err) {
      // A fetch that throws at once fails like one that rejects.
      started = Promise.reject(err);
    }
    // Set once fetch resolved: keel's errors before that are the fetch's, not this request's.
    let read = false;
    started
      .then((res): Promise<unknown> | undefined => {
        // Answered after the attempt ended (a fetch deaf to its signal): nothing reads this body,
        // so it is cancelled, not downloaded (a never-ending one for ever). Only an abort ends an
        // attempt before this point, so abortedBy is set. A throw, or the cancel's rejection,
        // lands below, where `done` drops it.
        if (done) return res.body?.cancel(abortedBy!.reason);
        // An error status's Retry-After date is read against the clock, read here: a clock that
        // throws fails the attempt with its own error (never retried as the response's), and
        // the body is let go.
        let now = 0;
        if (!isSuccessStatus(res?.status)) {
          try {
            now = clock.now();
          } catch (error) {
            finish(reject, error);
            return res.body?.cancel(error);
          }
        }
        read = true;
        // The attempt's end cancels keel's reader: a fetch may read its signal and still not
        // tie the body to it (a polyfill's header wait), and a never-ending body must not be
        // downloaded for ever.
        return readResponse(res, spec, now, {
          cancelWith(cancel) {
            cutBody = cancel;
          },
          tied: controller !== undefined,
        });
      })
      .then(
        (response) => {
          if (!done) finish(resolve, response);
          // Ended meanwhile (aborted, or failed by its clock: no response then): a stream body is
          // handed to no one, so it is cancelled (a fetch that read its signal may not tie the
          // body to it).
          else dropStream(spec, response as ApiResponse | undefined, abortedBy?.reason);
        },
        (err) => {
          if (done) return;
          const error = attemptError(err, spec, read);
          finish(reject, error);
          // A body not read to its end (too large, cut short) must not keep its connection.
          if (isResponseTooLargeError(error)) abortFetch(error);
        },
      );
  });
}

/**
 * A response no caller will take: a `stream` body (none for HEAD, 204, ...) is cancelled, or its
 * download would hold the connection; others were read whole already.
 */
export function dropStream(
  spec: RequestSpec,
  response: ApiResponse | undefined,
  reason: unknown,
): void {
  if (spec.responseType === 'stream') {
    void (response?.data as ReadableStream | undefined)?.cancel(reason).catch(noop);
  }
}

/** A timeout stays a TimeoutError; any other abort reason becomes (or stays) a CancelledError. */
function asCancel(reason: unknown, spec: RequestSpec): unknown {
  if (isCancelledError(reason) || isTimeoutError(reason)) return reason;
  return new CancelledError(spec, { cause: reason });
}
