import { checkBoolean, oneOf, typeError } from '../internal/checks';
import type { FetchOptions } from '../types/options';

/**
 * FetchOptions as RequestInit fields (`fetchCache` -> `cache`, `fetchPriority` -> `priority`).
 * Spelled out rather than picked from RequestInit, whose fields differ between the DOM types and
 * Node's.
 */
export interface FetchInit {
  readonly credentials?: FetchOptions['credentials'];
  readonly redirect?: FetchOptions['redirect'];
  readonly mode?: FetchOptions['mode'];
  readonly cache?: FetchOptions['fetchCache'];
  readonly keepalive?: boolean;
  readonly priority?: FetchOptions['fetchPriority'];
  readonly integrity?: string;
  readonly referrerPolicy?: FetchOptions['referrerPolicy'];
}

/** The allowed values of each string option, for validation. */
const VALUES = {
  credentials: ['omit', 'same-origin', 'include'],
  redirect: ['follow', 'error', 'manual'],
  // 'navigate' is the browser's own: a script may not set it (the Request constructor throws).
  mode: ['cors', 'no-cors', 'same-origin'],
  fetchCache: ['default', 'no-store', 'reload', 'no-cache', 'force-cache', 'only-if-cached'],
  fetchPriority: ['high', 'low', 'auto'],
  referrerPolicy: [
    '',
    'no-referrer',
    'no-referrer-when-downgrade',
    'same-origin',
    'origin',
    'strict-origin',
    'origin-when-cross-origin',
    'strict-origin-when-cross-origin',
    'unsafe-url',
  ],
} as const satisfies Partial<Record<keyof FetchOptions, readonly string[]>>;

/** Option name -> RequestInit field: keel's own `cache` and `priority` mean something else. */
const FIELDS = {
  credentials: 'credentials',
  redirect: 'redirect',
  mode: 'mode',
  fetchCache: 'cache',
  keepalive: 'keepalive',
  fetchPriority: 'priority',
  integrity: 'integrity',
  referrerPolicy: 'referrerPolicy',
} as const satisfies Record<keyof FetchOptions, keyof FetchInit>;

const NAMES = Object.keys(FIELDS) as (keyof FetchOptions)[];

/**
 * The fetch options of a client or request, validated and renamed to RequestInit's fields,
 * layered over `base` (the client's): undefined when neither sets any, `base` itself when the
 * options set none (so the common request builds nothing).
 */
export function resolveFetchInit(
  options: FetchOptions,
  base: FetchInit | undefined,
): FetchInit | undefined {
  // Named reads first: the common request sets none, and a keyed loop over its options costs
  // more than the rest of its resolution (bench: resolve with options).
  if (
    options.credentials === undefined &&
    options.redirect === undefined &&
    options.mode === undefined &&
    options.fetchCache === undefined &&
    options.keepalive === undefined &&
    options.fetchPriority === undefined &&
    options.integrity === undefined &&
    options.referrerPolicy === undefined
  ) {
    return base;
  }
  let out: Record<string, unknown> | undefined;
  for (const name of NAMES) {
    const value = options[name];
    if (value === undefined) continue;
    check(name, value);
    out ??= { ...base };
    out[FIELDS[name]] = value;
  }
  return out === undefined ? base : (Object.freeze(out) as FetchInit);
}

function check(name: keyof FetchOptions, value: unknown): void {
  if (name === 'keepalive') checkBoolean(name, value);
  else if (name === 'integrity') {
    if (typeof value !== 'string') throw typeError(name, 'a string', value);
  } else oneOf(name, value, VALUES[name]);
}
