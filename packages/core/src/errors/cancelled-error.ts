import { KeelError } from './keel-error';

/** The request was cancelled: `cancel()`, `cancelAll()`, a group cancel, or an aborted `signal`. */
export class CancelledError extends KeelError {
  constructor(message = 'Request cancelled', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CancelledError';
  }
}
