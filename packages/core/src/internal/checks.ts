import { MAX_TIMER_MS } from './clock';
import { noop } from './noop';

/*
 * Every option and argument check of @keel/core (and of @keel/react, through
 * `@keel/core/internals`) throws through here, so all of them read alike:
 * "keel: `timeout` must be a non-negative number of ms, got -1". A value of the wrong type is a
 * TypeError; a value of the right type that is out of range or not one of the allowed values is
 * a RangeError. @keel/server writes the same template from its own module.
 */

/** Longest string shown in a message: a huge bad value must not become a huge message. */
const SHOWN_MAX = 60;

/** A bad value as a message shows it: primitives as written, other values by kind. */
export function shown(value: unknown): string {
  if (typeof value === 'string') {
    return JSON.stringify(value.length > SHOWN_MAX ? `${value.slice(0, SHOWN_MAX)}...` : value);
  }
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'function') return 'a function';
    if (typeof value === 'symbol') return 'a symbol';
    return typeof value === 'bigint' ? `${value}n` : String(value);
  }
  return Array.isArray(value) ? 'an array' : 'an object';
}

/** The one template: "keel: `name` must be <expected>, got <value>". */
export function mustBe(name: string, expected: string, value: unknown): string {
  return `keel: \`${name}\` must be ${expected}, got ${shown(value)}`;
}

/** `name` holds a value of the wrong type. */
export function typeError(name: string, expected: string, value: unknown, cause?: unknown) {
  return new TypeError(mustBe(name, expected, value), cause === undefined ? undefined : { cause });
}

/** `name` holds a value of the right type but a wrong value. */
export function rangeError(name: string, expected: string, value: unknown, cause?: unknown) {
  return new RangeError(mustBe(name, expected, value), cause === undefined ? undefined : { cause });
}

/** A number `ok` accepts: TypeError for a non-number, RangeError when `ok` refuses it. */
export function checkNumber(
  name: string,
  value: unknown,
  expected: string,
  ok: (n: number) => boolean,
): number {
  if (typeof value === 'number' && ok(value)) return value;
  throw (typeof value === 'number' ? rangeError : typeError)(name, expected, value);
}

/**
 * A duration in ms: a number >= 0 and at most `max` (a timer cannot wait longer than 2^31-1 ms:
 * Node and browsers fire a longer one at once; Infinity takes Infinity, as `cache.gcTime` does).
 * TypeError for a non-number.
 */
export function checkMs(name: string, value: unknown, max = MAX_TIMER_MS): number {
  if (typeof value === 'number' && value >= 0 && value <= max) return value;
  const expected =
    max === Number.MAX_VALUE
      ? 'a finite non-negative number of ms'
      : `a non-negative number of ms${max === Infinity ? ' (or Infinity)' : `, at most ${max}`}`;
  throw (typeof value === 'number' ? rangeError : typeError)(name, expected, value);
}

/**
 * An optional duration, checked alike on the client and on a request: `fallback` when undefined,
 * else checkMs (so `null` is a TypeError, as the option's type says).
 */
export function optionalMs(name: string, value: unknown, fallback: number): number {
  return value === undefined ? fallback : checkMs(name, value);
}

/** An integer >= `min`; `unbounded` also accepts Infinity ("no limit"). */
export function checkInteger(name: string, value: unknown, min: number, unbounded = false): number {
  if (
    typeof value === 'number' &&
    value >= min &&
    (Number.isInteger(value) || (unbounded && value === Infinity))
  ) {
    return value;
  }
  const expected = `an integer >= ${min}${unbounded ? ' (or Infinity)' : ''}`;
  throw (typeof value === 'number' ? rangeError : typeError)(name, expected, value);
}

/**
 * `defaults`, with each of its fields that `options` sets (not undefined) taken from `options`
 * (other keys of `options` are not read): the layering of an options block resolved once, at
 * client creation, before its fields are checked.
 */
export function withDefaults<T extends object>(
  options: { [K in keyof T]?: unknown },
  defaults: T,
): T {
  const out = { ...defaults };
  for (const key in defaults) {
    const value = options[key];
    if (value !== undefined) (out as Record<string, unknown>)[key] = value;
  }
  return out;
}

/** `true` or `false`. */
export function checkBoolean(name: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw typeError(name, 'true or false', value);
  return value;
}

/** A function (a callback, a predicate). */
export function checkFunction(name: string, value: unknown): void {
  if (typeof value !== 'function') throw typeError(name, 'a function', value);
}

/**
 * What an app's predicate answered. It is called synchronously: a promise (an async function in
 * plain JS) would be truthy, a yes to everything, so it is a TypeError naming `name`, and its
 * rejection is caught (it would be unhandled).
 */
export function answer(name: string, result: unknown): boolean {
  if (typeof (result as PromiseLike<unknown> | null)?.then === 'function') {
    (result as PromiseLike<unknown>).then(undefined, noop);
    throw new TypeError(`keel: \`${name}\` must return a boolean, not a promise`);
  }
  return !!result;
}

/**
 * An options object: not null, not an array; with `keys`, every own key one of them. A misspelt
 * key was dropped in silence (`baseUrl` left the client without a base URL, `{ query }` sent no
 * query): TypeScript catches it, JavaScript did not.
 */
export function checkObject(
  name: string,
  value: unknown,
  expected = 'an object',
  keys?: ReadonlySet<string>,
): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw typeError(name, expected, value);
  }
  if (keys === undefined) return;
  for (const key of Object.keys(value)) {
    if (!keys.has(key)) {
      throw rangeError(name, `an object with only the keys ${[...keys].join(', ')}`, key);
    }
  }
}

/**
 * An options type's keys, as a set, from a space-separated list (`test/option-keys.test.ts` checks
 * each list against its type) and the keys of `also` (a defaults object that holds some).
 */
export function keysOf(list: string, also?: object): ReadonlySet<string> {
  return new Set([...(list ? list.split(' ') : []), ...Object.keys(also ?? {})]);
}

/** One of a few strings: TypeError for a non-string, RangeError for any other string. */
export function oneOf<const T extends string>(
  name: string,
  value: unknown,
  allowed: readonly T[],
): T {
  if ((allowed as readonly unknown[]).includes(value)) return value as T;
  const expected = `one of ${allowed.map((a) => `'${a}'`).join(', ')}`;
  throw (typeof value === 'string' ? rangeError : typeError)(name, expected, value);
}
