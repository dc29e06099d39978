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
  if (typeof headers !== 'object' || headers === null) {
    throw new TypeError(`keel: ${field} must be an object of strings, got ${typeof headers}`);
  }
  const out: Record<string, string> = {};
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    if (typeof value !== 'string' && typeof value !== 'number') {
      throw new TypeError(`keel: header "${name}" must be a string, got ${typeof value}`);
    }
    out[name.toLowerCase()] = String(value);
  }
  return out;
}

const BODY_TYPES: ReadonlySet<string> = new Set(['json', 'text', 'arrayBuffer', 'blob', 'stream']);

/** `responseType`: undefined (from the Content-Type) or one of the body types. */
export function checkResponseType(value: unknown): ResponseBodyType | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    throw new TypeError(`keel: responseType must be a string, got ${typeof value}`);
  }
  if (!BODY_TYPES.has(value)) {
    throw new RangeError(
      `keel: responseType must be one of ${[...BODY_TYPES].join(', ')}, got ${JSON.stringify(value)}`,
    );
  }
  return value as ResponseBodyType;
}

/** `maxResponseBytes`: an integer >= 0; undefined or Infinity (no limit) resolve to undefined. */
export function checkMaxBytes(value: unknown): number | undefined {
  if (value === undefined || value === Number.POSITIVE_INFINITY) return undefined;
  if (typeof value !== 'number') {
    throw new TypeError(`keel: maxResponseBytes must be a number of bytes, got ${typeof value}`);
  }
  if (!(value >= 0) || !Number.isInteger(value)) {
    throw new RangeError(
      `keel: maxResponseBytes must be an integer >= 0 (or Infinity), got ${String(value)}`,
    );
  }
  return value;
}
