import { KeelError } from './keel-error';

/** The response said it was JSON but its body did not parse. Not retried. */
export class ParseError extends KeelError {
  readonly status: number;
  readonly body: string;
  constructor(status: number, body: string, cause: unknown) {
    super(`Response body is not valid JSON (status ${status})`, { cause });
    this.name = 'ParseError';
    this.status = status;
    this.body = body;
  }
}
