import { checkInteger, checkObject, oneOf, typeError } from '../internal/checks';
import type { ResponseBodyType } from '../types/options';

/*
 * The request options a client may also set as defaults for every request (`headers`,
 * `responseType`, `maxResponseBytes`): one check each, used by the client's config and by each
 * request's resolution.
 */

/** Header names lower-cased (they are case-insensitive), values as strings; `field` names the option. */
export function lowerCaseHeaders(
  headers: Record<string, string>,
  field: string,
): Record<string, string> {
  checkObject(field, headers, 'an object of header strings');
  const out: Record<string, string> = {};
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    if (typeof value !== 'string' && typeof value !== 'number') {
      throw typeError(`${field}[${JSON.stringify(name)}]`, 'a string', value);
    }
    out[name.toLowerCase()] = String(value);
  }
  return out;
}

/** An array of strings: `expected` says what the array should be, `item` what each element. */
export function checkStrings(
  name: string,
  value: unknown,
  expected: string,
  item = 'a string',
): readonly string[] {
  if (!Array.isArray(value)) throw typeError(name, expected, value);
  for (let i = 0; i < value.length; i++) {
    if (typeof value[i] !== 'string') throw typeError(`${name}[${i}]`, item, value[i]);
  }
  return value;
}

const BODY_TYPES = ['json', 'text', 'arrayBuffer', 'blob', 'stream'] as const;

/** `responseType`: undefined (from the Content-Type) or one of the body types. */
export function checkResponseType(value: unknown): ResponseBodyType | undefined {
  return value === undefined ? undefined : oneOf('responseType', value, BODY_TYPES);
}

/** `maxResponseBytes`: an integer >= 0; undefined or Infinity (no limit) resolve to undefined. */
export function checkMaxBytes(value: unknown): number | undefined {
  if (value === undefined || value === Number.POSITIVE_INFINITY) return undefined;
  return checkInteger('maxResponseBytes', value, 0, true);
}
