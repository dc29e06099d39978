/**
 * How one measured request ended (events rule 3): `took` (a response the engine does not count
 * against the endpoint), `error` (5xx, timeout, network error) or `rateLimited` (429).
 */
export type Outcome = 'took' | 'error' | 'rateLimited';

const TOOK = 0;
const ERROR = 1;
const RATE_LIMITED = 2;
const CODES: Record<Outcome, number> = { took: TOOK, error: ERROR, rateLimited: RATE_LIMITED };

/**
 * The last `size` outcomes of one endpoint, with running counts per kind so the shares are O(1)
 * to read and `record` is O(1): the evicted slot's kind is decremented, the new one incremented.
 */
export class OutcomeRing {
  readonly #codes: Uint8Array;
  readonly #counts = [0, 0, 0];
  #next = 0;
  #count = 0;

  constructor(readonly size: number) {
    this.#codes = new Uint8Array(size);
  }

  get count(): number {
    return this.#count;
  }

  get errors(): number {
    return this.#counts[ERROR]!;
  }

  get rateLimited(): number {
    return this.#counts[RATE_LIMITED]!;
  }

  /** Share of errors among the outcomes held now; 0 when empty. */
  get errorRatio(): number {
    return this.#count === 0 ? 0 : this.errors / this.#count;
  }

  /** Share of 429s among the outcomes held now; 0 when empty. */
  get rateLimitRatio(): number {
    return this.#count === 0 ? 0 : this.rateLimited / this.#count;
  }

  record(outcome: Outcome): void {
    const code = CODES[outcome];
    if (this.#count === this.size) this.#counts[this.#codes[this.#next]!]!--;
    else this.#count++;
    this.#codes[this.#next] = code;
    this.#counts[code]!++;
    this.#next = this.#next + 1 === this.size ? 0 : this.#next + 1;
  }
}
