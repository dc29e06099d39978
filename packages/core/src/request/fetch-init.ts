import { checkBoolean, oneOf, typeError } from '../internal/checks';
import { freeze } from '../internal/freeze';
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

/**
 * Option name -> the RequestInit field it sets (keel's own `cache` and `priority` mean something
 * else) and, for a string option, its allowed values; `keepalive` is a boolean, `integrity` any
 * string.
 */
const FIELDS: Record<keyof FetchOptions, [keyof FetchInit, (readonly string[])?]> = {
  credentials: ['credentials', ['omit', 'same-origin', 'include']],
  redirect: ['redirect', ['follow', 'error', 'manual']],
  // 'navigate' is the browser's own: a script may not set it (the Request constructor throws).
  mode: ['mode', ['cors', 'no-cors', 'same-origin']],
  fetchCache: [
    'cache',
    ['default', 'no-store', 'reload', 'no-cache', 'force-cache', 'only-if-cached'],
  ],
  keepalive: ['keepalive'],
  fetchPriority: ['priority', ['high', 'low', 'auto']],
  integrity: ['integrity'],
  referrerPolicy: [
    'referrerPolicy',
    [
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
  ],
};

/** The options a client and a request both take (the FetchOptions among them), space-separated. */
export const SHARED_OPTION_NAMES = /* @__PURE__ */ `baseURL headers cache retry timeout deadline responseType maxResponseBytes ${Object.keys(FIELDS).join(' ')}`;

/**
 * The fetch options of a client or request, validated and renamed to RequestInit's fields,
 * layered over `base` (the client's): undefined when neither sets any, `base` itself when the
 * options set none (so the common request builds nothing).
 */
export function resolveFetchInit(options: FetchOptions, base?: FetchInit): FetchInit | undefined {
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
  const out: Record<string, unknown> = { ...base };
  for (const name in FIELDS) {
    const value = options[name as keyof FetchOptions];
    if (value === undefined) continue;
    const [field, values] = FIELDS[name as keyof FetchOptions];
    if (values) oneOf(name, value, values);
    else if (name === 'keepalive') checkBoolean(name, value);
    else if (typeof value !== 'string') throw typeError(name, 'a string', value);
    out[field] = value;
  }
  return freeze(out) as FetchInit;
}
