/**
 * One change the engine made, in the order it made them. The client applies `ceiling` through
 * the scheduler; `retry` and `strategy` are read back per request, so they need no applying.
 * `window` is the endpoint's window count when the decision was taken (1 = its first window).
 */
export type AdaptiveDecision =
  | (DecisionBase & { type: 'ceiling'; from: number; to: number })
  | (DecisionBase & { type: 'retry'; mode: 'nominal' | 'throttled'; multiplier: number })
  | (DecisionBase & { type: 'strategy'; strategy: 'stale-while-revalidate' | undefined });

export interface DecisionBase {
  endpoint: string;
  window: number;
  /** The injected clock's time when the window closed. */
  at: number;
  reason: string;
}

/** Receives every decision as it is taken; must not throw (errors are the caller's bug). */
export type DecisionListener = (decision: AdaptiveDecision) => void;
