import { KeelError } from './keel-error';

/** The circuit for `endpoint` (`METHOD pathname`) is open: no attempt was made. */
export class CircuitOpenError extends KeelError {
  readonly endpoint: string;
  constructor(endpoint: string) {
    super(`Circuit open for ${endpoint}`);
    this.name = 'CircuitOpenError';
    this.endpoint = endpoint;
  }
}
