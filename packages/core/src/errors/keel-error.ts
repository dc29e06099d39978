/** Base class of every error keel raises, so `instanceof KeelError` catches them all. */
export class KeelError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KeelError';
  }
}

/** Guard that also works across realms / duplicate copies of the package, where `instanceof` fails. */
export function hasErrorName(err: unknown, name: string): boolean {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === name;
}
