import { KeelError } from '@keel/core';
import { guardFor } from '@keel/core/internals';

/**
 * Thrown by a suspense query rendered on the server with nothing cached for its key. Rendering on
 * the server never starts a request (renderToString would not wait for it, and the browser could
 * not reuse it): React renders the nearest `<Suspense>` fallback instead and renders that part in
 * the browser, which fetches it. Prefetch what a page needs and hand it over with `dehydrate` /
 * `<HydrationBoundary>` to render it on the server. Streaming renderers report it to `onError`:
 * `if (isNoServerDataError(error)) return;` keeps it out of the logs.
 */
export class NoServerDataError extends KeelError {
  override name = 'NoServerDataError' as const;
  /** The query's cache key. */
  readonly key: string;

  /** @param key The query's cache key. */
  constructor(key: string) {
    // What React does then (renders the boundary in the browser) is the class comment's and the
    // README's to say: the message names the key and the fix.
    super(
      `keel: a suspense query has no data on the server for ${key}: prefetch it before rendering (dehydrate / <HydrationBoundary>)`,
    );
    this.key = key;
  }
}

/** True for a NoServerDataError, also one from another copy of the package. */
export const isNoServerDataError = /* @__PURE__ */ guardFor(
  NoServerDataError,
  'NoServerDataError',
  'react',
);
