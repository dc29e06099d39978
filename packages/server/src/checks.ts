/**
 * Every option and argument check of the server throws through here, so all of them read the
 * same: "keel: `bodyLimit` must be a non-negative integer number of bytes, got -1". A value of
 * the wrong type is a TypeError; a value of the right type that is out of range or malformed is
 * a RangeError.
 */

const SHOWN_STRING = 60;

/**
 * The userinfo of a URL (`user:password@`, `:password@`), wherever it sits in a text: a URL, or
 * an error's message that quotes one or a path made of one (ioredis's `connect ENOENT
 * /u:pw@host`). The password runs to the last `@` of its word, so one with an `@` is hidden whole.
 */
const USERINFO = /([^\s/@:"'`(]*:)[^\s/"'`]*@/g;

/**
 * `text` with every URL password in it replaced by `***` (`redis://u:***@host`), for a message
 * built from a URL or from a cause's text. Error paths only; a text with no `@` is returned as is.
 */
export function hidePasswords(text: string): string {
  return text.includes('@') ? text.replace(USERINFO, '$1***@') : text;
}

/**
 * An error as a warning quotes it: its message with its code (an AggregateError of a connect has
 * an empty message, so its name), any URL password hidden (a store's error can name its server,
 * and ioredis quotes a socket path, which can be a mistyped URL). Anything else as a string.
 */
export function errorText(error: unknown): string {
  if (!(error instanceof Error)) return hidePasswords(String(error));
  const code = (error as { code?: unknown }).code;
  const text = hidePasswords(error.message || error.name);
  return typeof code === 'string' && !text.includes(code) ? `${code}: ${text}` : text;
}

/**
 * A bad value as a message shows it: numbers and strings as written (a URL's password hidden),
 * anything else by kind.
 */
export function shown(value: unknown): string {
  switch (typeof value) {
    case 'string': {
      // Hidden before the cut, which could leave a password without the `@` that marks it.
      const text = hidePasswords(value);
      const cut = text.length > SHOWN_STRING ? `${text.slice(0, SHOWN_STRING)}...` : text;
      return JSON.stringify(cut);
    }
    case 'number':
    case 'boolean':
    case 'bigint':
    case 'undefined':
      return String(value);
    case 'function':
      return 'a function';
    case 'symbol':
      return 'a symbol';
    default:
      if (value === null) return 'null';
      if (Array.isArray(value)) return 'an array';
      if (value instanceof RegExp) return String(value);
      if (value instanceof Date) {
        return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
      }
      return 'an object';
  }
}

/** The one template: "keel: `name` must be <expected>, got <value>". */
export function mustBe(name: string, expected: string, value: unknown): string {
  return `keel: \`${name}\` must be ${expected}, got ${shown(value)}`;
}

/** The value has the wrong type. */
export function typeError(
  name: string,
  expected: string,
  value: unknown,
  cause?: unknown,
): TypeError {
  return new TypeError(mustBe(name, expected, value), cause === undefined ? undefined : { cause });
}

/**
 * Data that JSON cannot hold, of `where` (`event "x" (topic "t")`): "keel: `data` of event "x"
 * must be a string or JSON-serializable, got an object (<JSON's message, on one line>)".
 */
export function unserializable(where: string, value: unknown, cause: unknown): TypeError {
  // The cause's text can quote anything the data held (a URL with its password).
  const text = cause === undefined ? '' : String(cause instanceof Error ? cause.message : cause);
  const why = cause === undefined ? '' : ` (${hidePasswords(text).replace(/\s+/g, ' ')})`;
  return new TypeError(
    `keel: \`data\` of ${where} must be a string or JSON-serializable, got ${shown(value)}${why}`,
    cause === undefined ? undefined : { cause },
  );
}

/**
 * A body `ctx.json()` / `ctx.send()` cannot serialize (a BigInt, a cycle): what JSON said, and
 * what to change. Thrown in the handler, so the client gets a 500 and `onError` this.
 */
export function notJson(call: string, value: unknown, cause: unknown): TypeError {
  const text = hidePasswords(String(cause instanceof Error ? cause.message : cause));
  return new TypeError(
    `keel: ctx.${call} needs a JSON-serializable value, got ${shown(value)} ` +
      `(${text.replace(/\s+/g, ' ')}): turn BigInts into strings or numbers and drop cycles ` +
      '(or give the object a toJSON())',
    { cause },
  );
}

/**
 * A route path the router refused (or one it would take and lose a parameter of): the path
 * shown, the rule, and the router's words as the cause. A non-string is a TypeError.
 */
export function badRoutePath(where: string, path: unknown, why: string, cause?: unknown): Error {
  return (typeof path === 'string' ? rangeError : typeError)(
    `path of ${where}`,
    `a route pattern ("/" first, ":name" parameters, "*" only last; ${why})`,
    path,
    cause,
  );
}

/** The value has the right type and a wrong value. */
export function rangeError(
  name: string,
  expected: string,
  value: unknown,
  cause?: unknown,
): RangeError {
  return new RangeError(mustBe(name, expected, value), cause === undefined ? undefined : { cause });
}

/** A number that `ok` accepts: TypeError when it is not a number, RangeError when `ok` refuses it. */
export function checkNumber(
  name: string,
  value: unknown,
  expected: string,
  ok: (n: number) => boolean,
): number {
  if (typeof value !== 'number') throw typeError(name, expected, value);
  if (!ok(value)) throw rangeError(name, expected, value);
  return value;
}

/** "a positive integer", "a non-negative integer", "an integer in 0-11", "an integer >= 2". */
function integerText(min: number, max: number): string {
  if (max !== Number.MAX_SAFE_INTEGER) return `an integer in ${min}-${max}`;
  if (min === 0) return 'a non-negative integer';
  if (min === 1) return 'a positive integer';
  return `an integer >= ${min}`;
}

/**
 * An optional integer option in `min..max`, `fallback` when undefined. `unit` completes the
 * expectation: `integer('bodyLimit', v, 1024, 0, undefined, 'bytes')` asks for "a non-negative
 * integer number of bytes".
 */
export function integer(
  name: string,
  value: unknown,
  fallback: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
  unit?: string,
): number {
  if (value === undefined) return fallback;
  const expected =
    unit === undefined ? integerText(min, max) : `${integerText(min, max)} number of ${unit}`;
  return checkNumber(name, value, expected, (n) => Number.isInteger(n) && n >= min && n <= max);
}

/** A function (a handler, a hook). */
export function checkFunction(name: string, value: unknown): void {
  if (typeof value !== 'function') throw typeError(name, 'a function', value);
}

/** A plain options object (not null, not an array). */
export function checkObject(name: string, value: unknown): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw typeError(name, 'an object', value);
  }
}

/**
 * The keys of an options type, as a set. Written as a record so that TypeScript checks the list
 * against the type: a field added to the type and not here, or one listed that the type lacks,
 * does not compile.
 */
export function keysOf<T>(
  keys: { readonly [K in keyof Required<T>]: 0 },
  also: Iterable<string> = [],
): ReadonlySet<string> {
  return new Set([...Object.keys(keys), ...also]);
}

/**
 * Every own key of an options object is one of `keys`, else a RangeError naming the key, the
 * closest known one and the list. A misspelt option was dropped in silence: `requestTimeot` kept
 * Node's 300 s, `topics` on a publish broadcast a team's event to everyone, `privat` sent a
 * Cache-Control without the directive asked for. TypeScript catches these; JavaScript did not.
 */
export function knownKeys(name: string, value: object, keys: ReadonlySet<string>): void {
  for (const key of Object.keys(value)) {
    if (keys.has(key)) continue;
    const near = closestKey(key, keys);
    const message = mustBe(name, `an object with only the keys ${[...keys].join(', ')}`, key);
    throw new RangeError(near === undefined ? message : `${message} (did you mean \`${near}\`?)`);
  }
}

/** An options object: a plain object (checkObject) whose every key is one of `keys`. */
export function checkOptions(name: string, value: unknown, keys: ReadonlySet<string>): void {
  checkObject(name, value);
  knownKeys(name, value as object, keys);
}

/**
 * The known key a misspelt one most likely meant: the same but for case, or within an edit
 * distance of 2 (1 for keys under 5 characters, where 2 edits make any word another), or a
 * prefix of at least 3 characters either way (`close` for `closeConnection`, `minimum` for
 * `min`).
 */
function closestKey(key: string, keys: ReadonlySet<string>): string | undefined {
  const lower = key.toLowerCase();
  let best: string | undefined;
  let bestScore = lower.length < 5 ? 2 : 3;
  for (const known of keys) {
    const other = known.toLowerCase();
    const short = Math.min(lower.length, other.length);
    const score =
      other === lower
        ? 0
        : short >= 3 && (other.startsWith(lower) || lower.startsWith(other))
          ? 1
          : editDistance(lower, other, bestScore);
    if (score < bestScore) {
      best = known;
      bestScore = score;
    }
  }
  return best;
}

/** Levenshtein distance of `a` and `b`, or `limit` once it is known to be at least that. */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) >= limit) return limit;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let least = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost);
      row.push(value);
      if (value < least) least = value;
    }
    if (least >= limit) return limit;
    previous = row;
  }
  return Math.min(previous[b.length]!, limit);
}

/** An optional boolean option, `fallback` when undefined. */
export function boolean(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw typeError(name, 'true or false', value);
  return value;
}

/** One of a few strings: TypeError for a non-string, RangeError for any other string. */
export function oneOf<const T extends string>(
  name: string,
  value: unknown,
  allowed: readonly T[],
): T {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) {
    return value as T;
  }
  // Worded only for the error: checks run on hot paths (a rules object written in a handler).
  const expected = `one of ${allowed.map((a) => `'${a}'`).join(', ')}`;
  throw (typeof value === 'string' ? rangeError : typeError)(name, expected, value);
}

/** A string without CR, LF or NUL (a header value, an SSE field, a URL): no injection. */
export function checkLine(name: string, value: unknown, expected: string): string {
  if (typeof value !== 'string') throw typeError(name, expected, value);
  if (/[\r\n\0]/.test(value)) throw rangeError(name, `${expected} without CR, LF or NUL`, value);
  return value;
}
