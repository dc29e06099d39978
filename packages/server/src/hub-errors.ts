import { brand, HttpException, hasBrand } from './errors';

const HUB_PUBLISH_ERROR = Symbol.for('keel.server.HubPublishError');

/** Why a publish failed: the hub was closed, or its store could not take the event. */
export type HubPublishFailure = 'closed' | 'store';

/**
 * `hub.publish` / `hub.invalidate` could not store the event (Redis unreachable, hub closed).
 * Nothing was sent to any client. An `HttpException` with status 503: a handler that awaits the
 * publish and lets this propagate answers `503 Service Unavailable`. The store's own error is
 * the `cause`.
 */
export class HubPublishError extends HttpException {
  override name = 'HubPublishError' as const;
  /** The event that was not published. */
  readonly event: string;
  /** `closed` (the hub was closed) or `store` (the store refused or could not be reached). */
  readonly reason: HubPublishFailure;

  /**
   * @param event The event that was not published.
   * @param reason `closed` or `store`.
   * @param options `cause`: the store's own error.
   */
  constructor(event: string, reason: HubPublishFailure, options?: { cause?: unknown }) {
    super(
      503,
      reason === 'closed'
        ? 'Live updates are closed'
        : 'Live updates are unavailable, the change was not announced',
      options,
    );
    this.event = event;
    this.reason = reason;
    brand(this, HUB_PUBLISH_ERROR);
  }
}

/** True for a {@link HubPublishError}, also one from another copy of this package. */
export function isHubPublishError(value: unknown): value is HubPublishError {
  return value instanceof HubPublishError || hasBrand(value, HUB_PUBLISH_ERROR);
}
