import { resolveAdaptiveOptions } from './adaptive/options';
import { createBaseClient } from './client';
import { adaptiveFeature } from './features/adaptive';
import { withCircuitBreaker } from './features/circuit-breaker';
import { withIntelligence } from './features/intelligence';
import { withScheduler } from './features/scheduler';
import { checkObject, typeError } from './internal/checks';
import type { Client } from './types/client';
import type { ClientFeature } from './types/features';
import type { ClientOptions } from './types/options';

/**
 * Creates a client with every feature its options ask for: intelligence and the circuit breaker
 * (on by default), the scheduler when `scheduler` is given, the adaptive engine when `adaptive`
 * is. Every option is optional; see ClientOptions for defaults. An app that wants a smaller
 * bundle builds the same client with createBaseClient and only the features it uses.
 *
 * @example
 * const client = createClient({ baseURL: 'https://api.example.com', timeout: 5000 });
 * const { data } = await client.get<User[]>('/users', { params: { page: 2 } });
 */
export function createClient(options: ClientOptions = {}): Client {
  checkObject('options', options);
  const { intelligence, circuitBreaker, scheduler, adaptive, ...base } = options;
  const { features: given } = base as { features?: unknown };
  if (given !== undefined) {
    throw typeError('features', 'an option of createBaseClient, not of createClient', given);
  }
  const features: ClientFeature[] = [
    withIntelligence(intelligence),
    withCircuitBreaker(circuitBreaker),
  ];
  if (scheduler !== undefined) features.push(withScheduler(scheduler));
  // The `adaptive` option is off unless it says `enabled: true` (withAdaptive's default is on).
  if (adaptive !== undefined) features.push(adaptiveFeature(resolveAdaptiveOptions(adaptive)));
  return createBaseClient({ ...base, features });
}
