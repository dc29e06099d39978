import { checkBoolean } from '@keel/core/internals';

/** The on/off options of the query hooks, all booleans (`suspense`: useQuery's; 'yes' suspended). */
const SWITCHES = ['enabled', 'refetchOnWindowFocus', 'refetchOnReconnect', 'suspense'] as const;

/**
 * Refuses a switch that is not a boolean (TypeError naming it). TanStack Query takes a function
 * for these (called with its Query object, which keel does not have): used as given, `() => false`
 * would count as on, so it is refused rather than silently read as true.
 */
export function checkSwitches(options: object | undefined): void {
  for (const name of SWITCHES) {
    const value = (options as Record<string, unknown> | undefined)?.[name];
    if (value !== undefined) checkBoolean(name, value);
  }
}
