import { CancelledError } from '../errors/cancelled-error';
import { TimeoutError } from '../errors/timeout-error';
import type { Clock } from '../internal/clock';
import type { ApiResponse, FetchLike, RequestSpec } from '../types';
import { readResponse } from './read-body';

/**
 * One network attempt: fetch, then read the body, under the flight's signal and an optional
 * per-attempt timeout. Rejects with TimeoutError when the timeout fires, CancelledError when the
 * flight is aborted, HttpError for a non-2xx status, or the fetch implementation's own error
 * (a network failure).
 *
 * The fetch promise is raced against the abort, so even a fetch implementation that ignores its
 * signal cannot keep a cancelled or timed-out request pending.
 */
export function attemptOnce(
  fetchImpl: FetchLike,
  spec: RequestSpec,
  flightSignal: AbortSignal,
  clock: Clock,
  timeout: number,
  hook?: AbortHook,
): Promise<ApiResponse> {
  if (flightSignal.aborted) return Promise.reject(asCancel(flightSignal.reason));
  let signal = flightSignal;
  let controller: AbortController | undefined;
  let timer: unknown;
  if (timeout > 0) {
    controller = new AbortController();
    signal = controller.signal;
  }
  return new Promise<ApiResponse>((resolve, reject) => {
    let done = false;
    const finish = () => {
      done = true;
      if (controller) {
        clock.clearTimeout(timer);
        signal.removeEventListener('abort', onSignalAbort);
      }
      if (hook) hook.onAbort = undefined;
      else flightSignal.removeEventListener('abort', onFlightEvent);
    };
    const onAbort = (reason: unknown) => {
      if (done) return;
      finish();
      reject(reason instanceof TimeoutError ? reason : asCancel(reason));
    };
    // The attempt's own signal: aborted by the timeout, or forwarded from the flight.
    const onSignalAbort = () => onAbort(signal.reason);
    const onFlightAbort = (reason: unknown) => {
      if (controller) controller.abort(reason);
      else onAbort(reason);
    };
    const onFlightEvent = () => onFlightAbort(flightSignal.reason);
    if (controller) {
      signal.addEventListener('abort', onSignalAbort, { once: true });
      timer = clock.setTimeout(() => controller!.abort(new TimeoutError(timeout)), timeout);
    }
    if (hook) hook.onAbort = onFlightAbort;
    else flightSignal.addEventListener('abort', onFlightEvent, { once: true });

    let started: Promise<Response>;
    try {
      started = fetchImpl(spec.url, {
        method: spec.method,
        headers: spec.headers as Record<string, string>,
        body: spec.body,
        signal,
      });
    } catch (err) {
      finish();
      reject(err);
      return;
    }
    started
      .then((res) => readResponse(res, spec.method, spec.url))
      .then(
        (response) => {
          if (done) return;
          finish();
          resolve(response);
        },
        (err) => {
          if (done) return;
          finish();
          // fetch reports an abort as its own AbortError: say what really happened.
          if (signal.aborted) {
            reject(signal.reason instanceof TimeoutError ? signal.reason : asCancel(signal.reason));
          } else reject(err);
        },
      );
  });
}

/**
 * A direct abort callback on the owner of `flightSignal`, called (with the reason) when that
 * signal aborts: cheaper than an EventTarget listener added and removed per attempt. The owner
 * must call it on every abort of the signal.
 */
export interface AbortHook {
  onAbort: ((reason: unknown) => void) | undefined;
}

function asCancel(reason: unknown): unknown {
  if (reason instanceof CancelledError || reason instanceof TimeoutError) return reason;
  return new CancelledError('Request cancelled', { cause: reason });
}
