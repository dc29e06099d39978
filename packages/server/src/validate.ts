import {
  boolean,
  checkNumber,
  checkObject,
  checkOptions,
  keysOf,
  oneOf,
  rangeError,
  typeError,
} from './checks';
import { BadRequestError, type ValidationIssue } from './errors';

/** Value types a rule can require. `email` is a string in address form. */
export type RuleType = 'string' | 'email' | 'number' | 'integer' | 'boolean';

/**
 * One field's rule for `ctx.validate`.
 * - `type`: without it, any string, number or boolean is accepted (objects and arrays are not).
 * - `min` / `max`: length for `string` / `email`, value for `number` / `integer` (inclusive).
 * - `pattern`: tested against strings (a string pattern is compiled with its rules: once a
 *   rules object is reused, it is cached).
 * - `enum`: the allowed values, compared after coercion.
 */
export interface Rule {
  /**
   * The value's type; strings are coerced for `number`, `integer` and `boolean` (query strings,
   * params and forms carry only strings). `email` is a string in address form.
   *
   * @default undefined (any string, number or boolean; not objects or arrays)
   */
  type?: RuleType | undefined;
  /**
   * The field must be present and not empty (`undefined`, `null` and `''` count as missing).
   *
   * @default false
   */
  required?: boolean | undefined;
  /**
   * Smallest length (`string`, `email`) or value (`number`, `integer`), inclusive.
   *
   * @default undefined (no minimum)
   */
  min?: number | undefined;
  /**
   * Largest length (`string`, `email`) or value (`number`, `integer`), inclusive. A string over
   * it fails without its `pattern` being run.
   *
   * @default undefined (no maximum)
   */
  max?: number | undefined;
  /**
   * Tested against string values (a string is compiled with the rules: at each use of a rules
   * object written in the handler, once for one that is reused).
   *
   * @default undefined (no pattern)
   */
  pattern?: RegExp | string | undefined;
  /**
   * The allowed values, compared after coercion.
   *
   * @default undefined (any value)
   */
  enum?: readonly (string | number | boolean)[] | undefined;
}

/** Field name to rule. Names `__proto__`, `constructor` and `prototype` are refused. */
export type Rules = Readonly<Record<string, Rule>>;

type ValueOf<R extends Rule> = R['type'] extends 'number' | 'integer'
  ? number
  : R['type'] extends 'boolean'
    ? boolean
    : R['type'] extends 'string' | 'email'
      ? string
      : string | number | boolean;

/** What `ctx.validate(rules)` returns: only the declared fields, optional ones possibly absent. */
export type Validated<R extends Rules> = {
  [K in keyof R as R[K]['required'] extends true ? K : never]: ValueOf<R[K]>;
} & {
  [K in keyof R as R[K]['required'] extends true ? never : K]?: ValueOf<R[K]>;
};

interface CompiledRule {
  field: string;
  type: RuleType | undefined;
  required: boolean;
  min: number | undefined;
  max: number | undefined;
  pattern: RegExp | undefined;
  enum: readonly (string | number | boolean)[] | undefined;
}

const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);
const TYPES: readonly RuleType[] = ['string', 'email', 'number', 'integer', 'boolean'];
const RULE_KEYS = keysOf<Rule>({ type: 0, required: 0, min: 0, max: 0, pattern: 0, enum: 0 });
// WHATWG "valid e-mail address", with at least one dot in the domain. Labels are separated by
// literal dots, so the pattern cannot backtrack catastrophically; length is capped before it.
const EMAIL =
  /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+$/;
// Each digit run can be matched one way only (the fraction needs its dot), so a failing match
// backtracks linearly; `\d+\.?\d*` split a digit run every possible way: quadratic.
const NUMERIC = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
/** Longer numeric strings are refused before any pattern runs: no real number needs more. */
export const MAX_NUMERIC_LENGTH = 100;
const compiledCache = new WeakMap<object, CompiledRule[]>();
const isNumber = (n: number) => !Number.isNaN(n);
/** The rules objects compiled last and not cached (a ring): one that comes again is cached. */
const seenOnce: (object | undefined)[] = new Array(8);
let seenNext = 0;

/**
 * Checks a rules object and compiles it; cached by identity from its second use (within the
 * last 8 rules objects compiled). A rules object written in the handler is a new object on every
 * request: adding each to the WeakMap cost 2.5x what checking it does (the collector's work on
 * weak entries), for an entry never read again.
 */
function compile(rules: Rules): CompiledRule[] {
  const cached = compiledCache.get(rules);
  if (cached !== undefined) return cached;
  checkObject('rules', rules);
  const out: CompiledRule[] = [];
  for (const field of Object.keys(rules)) {
    if (FORBIDDEN.has(field)) {
      throw rangeError(
        'rules',
        'field names other than __proto__, constructor and prototype',
        field,
      );
    }
    const name = `rules.${field}`;
    const rule = rules[field] as Rule;
    checkOptions(name, rule, RULE_KEYS);
    if (rule.type !== undefined) oneOf(`${name}.type`, rule.type, TYPES);
    boolean(`${name}.required`, rule.required, false);
    if (rule.min !== undefined) checkNumber(`${name}.min`, rule.min, 'a number', isNumber);
    if (rule.max !== undefined) checkNumber(`${name}.max`, rule.max, 'a number', isNumber);
    if (rule.enum !== undefined && !Array.isArray(rule.enum)) {
      throw typeError(`${name}.enum`, 'an array', rule.enum);
    }
    let pattern: RegExp | undefined;
    if (typeof rule.pattern === 'string') {
      try {
        pattern = new RegExp(rule.pattern);
      } catch (err) {
        throw rangeError(`${name}.pattern`, 'a valid regular expression', rule.pattern, err);
      }
    } else if (rule.pattern instanceof RegExp) pattern = rule.pattern;
    else if (rule.pattern !== undefined) {
      throw typeError(`${name}.pattern`, 'a RegExp or a string', rule.pattern);
    }
    out.push({
      field,
      type: rule.type,
      required: rule.required === true,
      min: rule.min,
      max: rule.max,
      pattern,
      enum: rule.enum,
    });
  }
  if (seenOnce.includes(rules)) compiledCache.set(rules, out);
  else {
    seenOnce[seenNext] = rules;
    seenNext = (seenNext + 1) % seenOnce.length;
  }
  return out;
}

/**
 * Coerces `raw` to the rule's type. Strings are coerced for number, integer and boolean because
 * query strings, route params and form bodies carry only strings. Returns `undefined` when the
 * value does not have (and cannot be coerced to) the type.
 */
function coerce(type: RuleType | undefined, raw: unknown): string | number | boolean | undefined {
  switch (type) {
    case 'string':
      return typeof raw === 'string' ? raw : undefined;
    case 'email':
      return typeof raw === 'string' && raw.length <= 254 && EMAIL.test(raw) ? raw : undefined;
    case 'number':
    case 'integer': {
      let n: number | undefined;
      if (typeof raw === 'number') n = raw;
      else if (typeof raw === 'string' && raw.length <= MAX_NUMERIC_LENGTH && NUMERIC.test(raw)) {
        n = Number(raw);
      }
      if (n === undefined || !Number.isFinite(n)) return undefined;
      return type === 'integer' && !Number.isInteger(n) ? undefined : n;
    }
    case 'boolean':
      if (typeof raw === 'boolean') return raw;
      if (raw === 'true' || raw === '1') return true;
      if (raw === 'false' || raw === '0') return false;
      return undefined;
    default:
      return typeof raw === 'string' || typeof raw === 'number' || typeof raw === 'boolean'
        ? raw
        : undefined;
  }
}

const TYPE_MESSAGES: Record<string, string> = {
  string: 'must be a string',
  email: 'must be a valid email address',
  number: 'must be a number',
  integer: 'must be an integer',
  boolean: 'must be a boolean',
  any: 'must be a string, number or boolean',
};

/**
 * Validates `data` against `rules`. Returns a fresh object with only the declared fields (never an
 * inherited or prototype key); throws {@link BadRequestError} listing every failure.
 */
export function validate<const R extends Rules>(rules: R, data: unknown): Validated<R> {
  const compiled = compile(rules);
  const source = typeof data === 'object' && data !== null && !Array.isArray(data) ? data : {};
  const result: Record<string, unknown> = {};
  const issues: ValidationIssue[] = [];
  for (const rule of compiled) {
    const { field } = rule;
    // Own properties only: a rule named `toString` must not read Object.prototype.toString.
    const raw = Object.hasOwn(source, field)
      ? (source as Record<string, unknown>)[field]
      : undefined;
    if (raw === undefined || raw === null || raw === '') {
      if (rule.required) issues.push({ field, rule: 'required', message: 'is required' });
      continue;
    }
    const value = coerce(rule.type, raw);
    if (value === undefined) {
      issues.push({
        field,
        rule: 'type',
        message: TYPE_MESSAGES[rule.type ?? 'any'] ?? 'is invalid',
      });
      continue;
    }
    const size =
      typeof value === 'string' ? value.length : typeof value === 'number' ? value : undefined;
    const unit = typeof value === 'string' ? ' characters' : '';
    const before = issues.length;
    if (size !== undefined && rule.min !== undefined && size < rule.min) {
      const message = unit ? `must be at least ${rule.min}${unit}` : `must be >= ${rule.min}`;
      issues.push({ field, rule: 'min', message });
    }
    const tooLarge = size !== undefined && rule.max !== undefined && size > rule.max;
    if (tooLarge) {
      const message = unit ? `must be at most ${rule.max}${unit}` : `must be <= ${rule.max}`;
      issues.push({ field, rule: 'max', message });
    }
    // A value already over `max` never reaches the pattern: user patterns may backtrack badly
    // on long input, and the field has failed anyway.
    if (rule.pattern !== undefined && typeof value === 'string' && !tooLarge) {
      rule.pattern.lastIndex = 0; // a /g or /y pattern keeps state between calls
      if (!rule.pattern.test(value)) {
        issues.push({ field, rule: 'pattern', message: 'does not match the expected format' });
      }
    }
    if (rule.enum !== undefined && !rule.enum.includes(value)) {
      issues.push({ field, rule: 'enum', message: `must be one of: ${rule.enum.join(', ')}` });
    }
    if (issues.length === before) result[field] = value;
  }
  if (issues.length > 0) throw new BadRequestError('Validation failed', { fields: issues });
  return result as Validated<R>;
}
