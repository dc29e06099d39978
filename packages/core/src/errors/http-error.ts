import { KeelError } from './keel-error';

export interface HttpErrorInit {
  status?: number;
  statusText?: string;
  headers?: Headers;
  /** The parsed response body (JSON or text), when there was one. */
  data?: unknown;
  url?: string;
  method?: string;
  /** The wait the response asked for with Retry-After, in ms. */
  retryAfter?: number;
}

/**
 * A response whose status is not 2xx. It is also the error carried by `retry` events.
 *
 * @example
 * try { await client.get('/users/7') } catch (e) { if (e instanceof HttpError && e.status === 404) ... }
 */
export class HttpError<T = unknown> extends KeelError {
  readonly status: number | undefined;
  readonly statusText: string | undefined;
  readonly headers: Headers | undefined;
  readonly data: T | undefined;
  readonly url: string | undefined;
  readonly method: string | undefined;
  /**
   * The wait the server asked for with a Retry-After header (seconds or an HTTP date), in ms from
   * when the response arrived; undefined without a valid header.
   */
  readonly retryAfter: number | undefined;

  constructor(init?: HttpErrorInit | number, statusText?: string, headers?: Headers, data?: T) {
    const i: HttpErrorInit =
      typeof init === 'object' && init !== null
        ? init
        : { status: init, statusText, headers, data };
    const where = i.method && i.url ? ` (${i.method} ${i.url})` : '';
    super(
      i.status === undefined
        ? `Request failed${where}`
        : `Request failed with status ${i.status}${i.statusText ? ` ${i.statusText}` : ''}${where}`,
    );
    this.name = 'HttpError';
    this.status = i.status;
    this.statusText = i.statusText;
    this.headers = i.headers;
    this.data = i.data as T | undefined;
    this.url = i.url;
    this.method = i.method;
    this.retryAfter = i.retryAfter;
  }
}
