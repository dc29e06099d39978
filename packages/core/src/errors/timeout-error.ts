import { KeelError } from './keel-error';

/** A single attempt ran longer than its `timeout` (ms). Retried like a 408 by default. */
export class TimeoutError extends KeelError {
  readonly timeout: number | undefined;
  constructor(timeout?: number) {
    super(timeout === undefined ? 'Request timed out' : `Request timed out after ${timeout} ms`);
    this.name = 'TimeoutError';
    this.timeout = timeout;
  }
}
