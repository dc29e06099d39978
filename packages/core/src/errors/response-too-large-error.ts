import { KeelError } from './keel-error';

/**
 * The response body is larger than `maxResponseBytes`: the download was aborted as soon as the
 * limit was passed (at once when its Content-Length said so). `received` is the bytes read when
 * it stopped, or the declared Content-Length. Not retried (the server answered; the answer is
 * too big), and not counted by the circuit breaker.
 */
export class ResponseTooLargeError extends KeelError {
  readonly limit: number;
  readonly received: number;
  readonly status: number;
  readonly method: string | undefined;
  readonly url: string | undefined;

  constructor(init: {
    limit: number;
    received: number;
    status: number;
    method?: string;
    url?: string;
  }) {
    const where = init.method && init.url ? ` (${init.method} ${init.url})` : '';
    super(
      `Response body exceeds maxResponseBytes ${init.limit} (${init.received} bytes or more)${where}`,
    );
    this.name = 'ResponseTooLargeError';
    this.limit = init.limit;
    this.received = init.received;
    this.status = init.status;
    this.method = init.method;
    this.url = init.url;
  }
}
