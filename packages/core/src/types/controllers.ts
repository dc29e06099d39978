import type { Priority } from './options';

/*
 * What `client.intelligence()`, `circuitBreaker()`, `scheduler()` and `adaptive()` return, and
 * the records they read.
 */

export interface IntelligenceController {
  snapshot(): IntelligenceSnapshot;
  endpoint(method: string, pathname: string): EndpointStats | undefined;
  reset(): void;
}

export interface IntelligenceSnapshot {
  summary: IntelligenceSummary;
  endpoints: EndpointStats[];
}

export interface IntelligenceSummary {
  totalRequests: number;
  cacheHits: number;
  cacheMisses: number;
  deduplicated: number;
  retriesPerformed: number;
  retriesRecovered: number;
  failures: number;
  rateLimited: number;
  timeouts: number;
  cancels: number;
  activeRequests: number;
  cacheHitRate: number;
  dedupRate: number;
  retryRate: number;
  failureRate: number;
  rateLimitRate: number;
  adaptive: AdaptiveMetrics;
  circuits: { open: number; halfOpen: number; closed: number };
  circuitRejected: number;
}

export interface EndpointStats {
  method: string;
  path: string;
  requests: number;
  successes: number;
  failures: number;
  cacheHits: number;
  cacheMisses: number;
  dedupPrevented: number;
  retriesPerformed: number;
  retriesRecovered: number;
  rateLimited: number;
  timeouts: number;
  cancels: number;
  latency: LatencyStats;
  circuit: CircuitState;
  circuitFailures: number;
  circuitRejected: number;
}

export interface LatencyStats {
  avg: number;
  p50: number;
  p95: number;
  samples: number;
}

export interface CircuitBreakerController {
  status(method: string, path: string): CircuitStatus;
  statuses(): CircuitStatus[];
  reset(method?: string, path?: string): void;
}

export interface CircuitStatus {
  endpoint: string;
  state: CircuitState;
  consecutiveFailures: number;
  openedAt?: number;
  probing: boolean;
}

export type CircuitState = 'closed' | 'open' | 'halfOpen';

export interface SchedulerController {
  stats(): SchedulerStats;
  pauseGroup(group: string): void;
  resumeGroup(group: string): void;
  cancelGroup(group: string): void;
  /**
   * Moves queued jobs matched by group name (as written) or request key (in any spelling, as
   * `getCached` reads one); returns how many moved.
   */
  prioritize(selector: string, priority: Priority): number;
}

export interface SchedulerStats {
  active: number;
  queued: number;
  delayed: number;
  completed: number;
  rejected: number;
  lanes: Record<Priority, number>;
}

export interface AdaptiveController {
  snapshot(): { enabled: boolean; endpoints: Record<string, EndpointAdaptiveState> };
  endpoint(method: string, path: string): EndpointAdaptiveState | undefined;
  metrics(): AdaptiveMetrics;
  reset(): void;
}

export interface AdaptiveMetrics {
  decisions: number;
  concurrencyReductions: number;
  concurrencyRecoveries: number;
  throttles: number;
  retryChanges: number;
}

export interface EndpointAdaptiveState {
  endpoint: string;
  configured: number;
  effective: number;
  mode: 'nominal' | 'reducing' | 'recovering';
  health: 'good' | 'recovering' | 'degraded' | 'throttled';
  reason: string;
  retryMultiplier: number;
  retryMode: 'nominal' | 'throttled';
  retryReason: string;
  strategy?: 'stale-while-revalidate';
  strategyReason: string;
  signals: LatencyStats & { errorRatio: number; rateLimitRatio: number; active: number };
  degradedSince?: number;
  counters: AdaptiveMetrics;
}
