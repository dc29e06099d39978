import { HttpError } from './errors';

const HUB_PUBLISH_ERROR_BRAND = Symbol.for('keel.server.HubPublishError');

/** Why a publish failed: the hub was closed, or its store could not take the event. */
export type HubPublishFailure = 'closed' | 'store';

/**
 * `hub.publish` / `hub.invalidate` could not store the event (Redis unreachable, hub closed).
 * Nothing was sent to any client. An `HttpError` with status 503: a handler that awaits the
 * publish and lets this propagate answers `503 Service Unavailable`. The store's own error is
 * the `cause`.
 */
export class HubPublishError extends HttpError {
  override name = 'HubPublishError';
  /** The event that was not published. */
  readonly event: string;
  /** `closed` (the hub was closed) or `store` (the store refused or could not be reached). */
  readonly reason: HubPublishFailure;

  constructor(event: string, reason: HubPublishFailure, cause?: unknown) {
    super(
      503,
      reason === 'closed'
        ? 'Live updates are closed'
        : 'Live updates are unavailable, the change was not announced',
      { cause },
    );
    this.event = event;
    this.reason = reason;
    Object.defineProperty(this, HUB_PUBLISH_ERROR_BRAND, { value: true });
  }
}

/** True for a {@link HubPublishError}, also one from another copy of this package. */
export function isHubPublishError(value: unknown): value is HubPublishError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[HUB_PUBLISH_ERROR_BRAND] === true
  );
}
