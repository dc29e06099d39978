/** The shortest quiet spell that ages samples (see Pace). */
export const QUIET_MIN_MS = 60_000;

/**
 * When an endpoint's samples are from another moment: the one aging rule of the adaptive engine
 * and intelligence (core README, "Aging"). Samples count in windows of `size`; one that comes
 * after a gap longer than the last window took to fill (the endpoint's own pace, a minute at
 * least) comes after a quiet spell, and the samples held should go. No pace is known until a
 * window fills afresh, so a pace that slows for good drops the samples once, not at every sample.
 * Time is the injected clock's, read by the caller (no timer); a gap it cannot tell (negative,
 * NaN, Infinity) is no spell.
 */
export class Pace {
  /** Samples in the window being filled: 0 right after one filled. */
  n = 0;
  /** When the last sample came. */
  #at = 0;
  /**
   * A longer gap is a quiet spell: how long the last window took (QUIET_MIN_MS at least);
   * Infinity while no window filled since the samples were last dropped (no pace known yet);
   * -Infinity before the first sample, so that one starts a window as a spell would.
   */
  #quiet = -Infinity;
  /** When the window being filled began: the previous window's close, or its first sample. */
  #since = 0;

  /** A sample at `now` would come after a quiet spell: the samples held are stale. */
  stale(now: number): boolean {
    const gap = now - this.#at;
    // Infinity is no gap: a clock that jumped there cannot tell time (nor can NaN).
    return gap > this.#quiet && gap < Infinity;
  }

  /**
   * Counts a sample at `now` into windows of `size`; true when it comes after a quiet spell (the
   * caller drops the samples it held; this one starts a window). `n` is 0 after a window filled.
   */
  sample(now: number, size: number): boolean {
    // NaN: the time a flight ended when the clock threw then. Taken as the time, it made the
    // pace NaN, and nothing aged for about two windows: it counts as at the last sample's time.
    now = Number.isNaN(now) ? this.#at : now;
    const stale = this.stale(now);
    if (stale) {
      this.n = 0;
      this.#quiet = Infinity;
      this.#since = now;
    }
    this.#at = now;
    if (++this.n === size) {
      this.n = 0;
      this.#quiet = Math.max(now - this.#since, QUIET_MIN_MS);
      this.#since = now;
    }
    return stale;
  }
}
