import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  defaultsOf,
  literalOf,
  NOT_A_LITERAL,
  optionDocProblems,
  optionTypes,
} from '../../../scripts/option-docs.mjs';
import { ADAPTIVE_DEFAULTS } from '../src/adaptive/options';
import { RETRY_DEFAULTS } from '../src/attempt/retry-policy';
import { CACHE_DEFAULTS, CACHE_STORE_DEFAULTS } from '../src/cache/options';
import { CIRCUIT_DEFAULTS } from '../src/circuit/options';
import { CLIENT_DEFAULTS } from '../src/config';
import { INTELLIGENCE_DEFAULTS } from '../src/intelligence/options';
import { SCHEDULER_DEFAULTS } from '../src/scheduler/options';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

/** Every public option type: the `...Options` interfaces, not the resolved ones. */
const types = optionTypes(SRC, (name) => name.endsWith('Options') && !name.startsWith('Resolved'));

/** What each documented `@default` must equal: the constants the resolvers fill defaults from. */
const { retryOn: _prose, ...retryDefaults } = RETRY_DEFAULTS; // retryOn's default is a rule, in words
const DEFAULTS = {
  ...defaultsOf('ClientOptions', CLIENT_DEFAULTS),
  ...defaultsOf('CacheOptions', { ...CACHE_DEFAULTS, ...CACHE_STORE_DEFAULTS }),
  ...defaultsOf('CacheStoreOptions', CACHE_STORE_DEFAULTS),
  ...defaultsOf('RetryOptions', retryDefaults),
  ...defaultsOf('CircuitBreakerOptions', CIRCUIT_DEFAULTS),
  ...defaultsOf('SchedulerOptions', SCHEDULER_DEFAULTS),
  ...defaultsOf('IntelligenceOptions', INTELLIGENCE_DEFAULTS),
  // `enabled` is not resolved: an absent or false adaptive block builds no engine.
  ...defaultsOf('AdaptiveOptions', { enabled: false, ...ADAPTIVE_DEFAULTS }),
};

describe('option docs: an editor hover is the manual', () => {
  it('finds the public option types', () => {
    expect([...types.keys()].sort()).toEqual(
      [
        'AdaptiveOptions',
        'BaseClientOptions',
        'CacheOptions',
        'CacheStoreOptions',
        'CircuitBreakerOptions',
        'ClientOptions',
        'DehydrateOptions',
        'FetchOptions',
        'IntelligenceOptions',
        'PrefetchOptions',
        'RequestOptions',
        'RetryOptions',
        'SchedulerOptions',
        'SchedulerRequestOptions',
        'WriteOptions',
      ].sort(),
    );
  });

  it('every field has a JSDoc sentence, every optional one a @default, and a @default is the resolved default', () => {
    expect(optionDocProblems(types, DEFAULTS)).toEqual([]);
  });

  it('the check fails on a missing doc, a missing @default and a wrong @default', () => {
    const fake = new Map([
      [
        'XOptions',
        [
          { path: 'XOptions.a', optional: true, sentence: '', default: '1' },
          {
            path: 'XOptions.b',
            optional: true,
            sentence: 'A documented field.',
            default: undefined,
          },
          { path: 'XOptions.c', optional: true, sentence: 'A documented field.', default: '30000' },
          {
            path: 'XOptions.d',
            optional: true,
            sentence: 'A documented field.',
            default: 'the rest',
          },
        ],
      ],
    ]);
    expect(
      optionDocProblems(fake, { 'XOptions.c': 3000, 'XOptions.d': 1, 'XOptions.e': 1 }),
    ).toEqual([
      'XOptions.a: no JSDoc sentence',
      'XOptions.b: no @default',
      'XOptions.c: @default 30000 but the resolved default is 3000',
      'XOptions.d: @default the rest but the resolved default is 1',
      'XOptions.e: in the defaults table but no option declares it',
    ]);
  });

  it('the check fails on an optional field whose type does not take undefined', () => {
    const field = { optional: true, sentence: 'A documented field.', default: '1' };
    const fake = new Map([
      [
        'XOptions',
        [
          { ...field, path: 'XOptions.a', takesUndefined: false },
          { ...field, path: 'XOptions.b', takesUndefined: true },
          { ...field, path: 'XOptions.c', optional: false, takesUndefined: false },
        ],
      ],
    ]);
    expect(optionDocProblems(fake)).toEqual([
      'XOptions.a: optional but does not take undefined (write `T | undefined`)',
    ]);
    // Read from the source: `?: T` does not take it; `T | undefined`, unknown and `(() => T) |
    // undefined` do (the option types above are checked the same way, by the test before).
    const read = new Map(types.get('RetryOptions')!.map((f) => [f.path, f.takesUndefined]));
    expect(read.get('RetryOptions.attempts')).toBe(true);
    expect(read.get('RetryOptions.retryOn')).toBe(true);
  });

  it('reads a @default literal in the forms the docs write', () => {
    expect(literalOf('300000 (5 minutes)')).toBe(300000);
    expect(literalOf("`'cache-first'`")).toBe('cache-first');
    expect(literalOf('Infinity')).toBe(Number.POSITIVE_INFINITY);
    expect(literalOf("['GET', 'HEAD']")).toEqual(['GET', 'HEAD']);
    expect(literalOf('60_000')).toBe(60000);
    expect(literalOf("the client's `deadline` (0)")).toBe(NOT_A_LITERAL);
  });
});
