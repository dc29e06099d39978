import type { Priority } from '../types/options';

/** The scheduler's lanes, highest first: what `priority` may be (one list for every reader). */
export const PRIORITIES: readonly Priority[] = ['high', 'normal', 'low'];
