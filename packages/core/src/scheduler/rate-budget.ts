/**
 * The rate limit as a sliding window over attempt start times: at most `requests` attempts start
 * in any `interval` ms. The last `requests` start times sit in a ring (grown on demand, so a
 * large `requests` costs memory only when used); the oldest one tells when budget frees.
 */
export class RateBudget {
  readonly #requests: number;
  readonly #interval: number;
  readonly #ring: number[] = [];
  /** Index of the oldest start once the ring is full. */
  #head = 0;

  constructor(requests: number, interval: number) {
    this.#requests = requests;
    this.#interval = interval;
  }

  /**
   * An attempt may start at `now`: fewer than `requests` started in (now - interval, now]. When
   * the clock stepped back, the starts it shows in the future count as starts now, so the wait
   * is `interval` at most (not the step as well); a NaN clock refuses nothing (a refusal would
   * re-arm a 0 ms timer forever).
   */
  available(now: number): boolean {
    const ring = this.#ring;
    if (ring.length < this.#requests) return true;
    if (ring[this.#head]! > now) ring.fill(now);
    return !(now - ring[this.#head]! < this.#interval);
  }

  /** The earliest moment an attempt may start (meaningful when not available). */
  freeAt(): number {
    return this.#ring.length < this.#requests ? 0 : this.#ring[this.#head]! + this.#interval;
  }

  /** Attempts started in (now - interval, now]: the budget in use (for inspection; O(requests)). */
  used(now: number): number {
    let n = 0;
    for (const at of this.#ring) if (now - at < this.#interval) n++;
    return n;
  }

  /** Records an attempt starting at `now` (call only when available). */
  take(now: number): void {
    if (this.#ring.length < this.#requests) {
      this.#ring.push(now);
      return;
    }
    this.#ring[this.#head] = now;
    this.#head = this.#head + 1 === this.#requests ? 0 : this.#head + 1;
  }
}
