import type { RequestSpec } from '../request/resolve';

/**
 * The `cache-hit` event's channel from the client to intelligence, built for the hottest path in
 * keel. The client runs the fast path inline (no call):
 *
 *   if (tally.spec === spec) tally.pending++; else tally.switchTo(spec);
 *
 * A repeated hit on a memoized spec is a pointer compare and an increment on this one object;
 * `pending` hits are handed to the sink (the endpoint's record) when another spec hits and
 * whenever intelligence is read (`flush`). A spec's endpoint never changes, so the pending hits
 * always belong to `spec.endpoint`.
 */
export class HitTally {
  /** The spec of the last cache hit. */
  spec: Pick<RequestSpec, 'endpoint'> | undefined;
  /** Hits on `spec` not yet handed to the sink. */
  pending = 0;

  constructor(private readonly sink: (endpoint: string, hits: number) => void) {}

  /** A hit on a spec other than the last one. */
  switchTo(spec: Pick<RequestSpec, 'endpoint'>): void {
    this.flush();
    this.spec = spec;
    this.pending = 1;
  }

  /** Hands the pending hits to the sink. */
  flush(): void {
    if (this.pending > 0 && this.spec !== undefined) this.sink(this.spec.endpoint, this.pending);
    this.pending = 0;
  }

  /** Drops the pending hits (intelligence was reset). */
  clear(): void {
    this.spec = undefined;
    this.pending = 0;
  }
}
