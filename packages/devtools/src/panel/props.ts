import { type Client, inspect } from '@keel/core';

/**
 * Checks the panel's props as keel checks options, with the core's template and its way of
 * showing the value (written here: the panel uses only @keel/core's public API): a TypeError for the wrong type, a RangeError for the wrong value, each
 * naming the prop (TypeScript catches these; JavaScript callers and values from config files do
 * not get that help).
 */
export function checkProps(
  props: { maxFlights: unknown; initialView: unknown; position: unknown; theme: unknown },
  views: readonly string[],
): void {
  const { maxFlights } = props;
  if (typeof maxFlights !== 'number') throw bad(TypeError, 'maxFlights', 'a number', maxFlights);
  if (!(maxFlights >= 0 && (Number.isInteger(maxFlights) || maxFlights === Infinity))) {
    throw bad(RangeError, 'maxFlights', 'a non-negative integer', maxFlights);
  }
  oneOf('initialView', props.initialView, views);
  oneOf('position', props.position, POSITIONS);
  oneOf('theme', props.theme, THEMES);
}

/**
 * A `client` prop that is no keel client is found at the first render, closed too: the open
 * panel's `inspect` would refuse it only when clicked open, naming `inspect`, not the prop.
 * (`inspect` is a lookup, and the inspector it makes once per client subscribes to nothing.)
 */
export function checkClient(client: Client): void {
  try {
    inspect(client);
  } catch {
    throw bad(TypeError, 'client', 'a client made by createClient or createBaseClient', client);
  }
}

const POSITIONS = ['bottom-right', 'bottom-left', 'top-right', 'top-left'] as const;
const THEMES = ['system', 'light', 'dark'] as const;

function oneOf(name: string, value: unknown, allowed: readonly string[]): void {
  if (allowed.includes(value as string)) return;
  const list = allowed.map((v) => `'${v}'`).join(', ');
  // A string that is not one of them is a wrong value; anything else a wrong type.
  throw bad(typeof value === 'string' ? RangeError : TypeError, name, `one of ${list}`, value);
}

/** "keel: KeelDevtools `name` must be <expected>, got <value>". */
function bad(
  type: typeof TypeError | typeof RangeError,
  name: string,
  expected: string,
  value: unknown,
): Error {
  return new type(`keel: KeelDevtools \`${name}\` must be ${expected}, got ${shown(value)}`);
}

/** A bad value as the core's messages show it: primitives as written, other values by kind. */
function shown(value: unknown): string {
  if (typeof value === 'string') {
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value);
  }
  if (typeof value === 'function' || typeof value === 'symbol') return `a ${typeof value}`;
  if (typeof value === 'bigint') return `${value}n`;
  if (value === null || typeof value !== 'object') return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}
