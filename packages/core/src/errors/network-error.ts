import { brandGuard } from './brand';
import { errorCodeOf } from './error-code';
import { type FailedRequest, KeelRequestError } from './keel-error';

/** What a NetworkError adds to its request. */
export interface NetworkErrorInit {
  /** What the fetch implementation threw (undici's `TypeError('fetch failed')`, ...). */
  cause: unknown;
  /** @default read from `cause` (`errorCodeOf`), else `ERR_NETWORK` */
  code?: string | undefined;
}

/**
 * The request got no HTTP response: the connection was refused or reset, DNS failed, the body was
 * cut short, a redirect looped. `code` is the platform's (`ECONNREFUSED`, `ECONNRESET`,
 * `ENOTFOUND`, `UND_ERR_SOCKET`, `ERR_TOO_MANY_REDIRECTS`, ...), or `ERR_NETWORK` where the
 * platform says nothing (a browser's "Failed to fetch"); `cause` is the original error. Retried
 * like a 503 for idempotent methods; a POST only when nothing was sent (`ECONNREFUSED`, ...).
 * A timeout of the transport (undici's `UND_ERR_HEADERS_TIMEOUT`) is a TimeoutError instead.
 *
 * @example
 * catch (e) { if (isNetworkError(e) && e.code === 'ECONNREFUSED') showOffline(); }
 */
export class NetworkError extends KeelRequestError {
  override name = 'NetworkError' as const;
  declare readonly code: string;

  constructor(request: FailedRequest, init: NetworkErrorInit) {
    const { cause } = init;
    const code = init.code ?? errorCodeOf(cause) ?? 'ERR_NETWORK';
    const detail = causeMessage(cause);
    super(request, `Network error ${code}`, { code }, cause, detail && `: ${detail}`);
  }
}

/** True for a NetworkError, also one from another copy of the package. */
export const isNetworkError = brandGuard('NetworkError', NetworkError);

/**
 * The innermost message worth showing: undici's outer "fetch failed" says less than its cause.
 * What a cause that throws when read (a getter, a revoked Proxy) lets through, never a throw.
 */
function causeMessage(cause: unknown): string {
  let e: unknown = cause;
  let message = '';
  try {
    for (let depth = 0; depth < 3 && e; depth++) {
      const m = (e as { message?: unknown }).message;
      if (typeof m === 'string' && m !== '') message = m;
      e = (e as { cause?: unknown }).cause;
    }
  } catch {}
  return message;
}
