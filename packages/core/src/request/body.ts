import { typeError } from '../internal/checks';

/**
 * What fetch gets, and the Content-Type keel adds when the caller set none; null for a form,
 * whose Content-Type fetch writes itself (multipart with its boundary): none may be sent for it.
 */
export interface SerializedBody {
  body: BodyInit | undefined;
  contentType: string | undefined | null;
}

/** A JSON Content-Type (`application/json`, `*+json`): what a sent and a received body test. */
export const JSON_TYPE = /[/+]json\b/i;

const SERIALIZABLE = 'a string, binary or form data, or a value JSON.stringify can write';

const NONE: SerializedBody = { body: undefined, contentType: undefined };

/**
 * Body rules: strings, URLSearchParams, FormData, Blob, ArrayBuffer, typed arrays and streams go
 * to fetch as they are (fetch sets their Content-Type; a form's must not be replaced by a
 * client-wide one, see resolveRequest); anything else is JSON-stringified and sent
 * as `application/json`. A value JSON cannot represent (BigInt, a cycle, a function) is a
 * TypeError naming the cause.
 */
export function serializeBody(body: unknown): SerializedBody {
  if (body === undefined || body === null) return NONE;
  if (typeof body === 'string') return { body, contentType: 'text/plain;charset=UTF-8' };
  if (isA(body, FORMS)) return { body: body as BodyInit, contentType: null };
  if (ArrayBuffer.isView(body) || isA(body, PASS_THROUGH)) {
    return { body: body as BodyInit, contentType: undefined };
  }
  let json: string | undefined;
  try {
    json = JSON.stringify(body);
  } catch (cause) {
    // A BigInt or a cycle: the message says which.
    const expected = `${SERIALIZABLE} (${(cause as Error).message})`;
    throw typeError('body', expected, body, cause);
  }
  // A function or a symbol: JSON.stringify writes nothing.
  if (json === undefined) throw typeError('body', SERIALIZABLE, body);
  return { body: json, contentType: 'application/json' };
}

/** The body classes fetch takes as they are, by global name (a runtime may lack some). */
const FORMS = ['URLSearchParams', 'FormData'];
const PASS_THROUGH = ['Blob', 'ArrayBuffer', 'ReadableStream'];

function isA(body: unknown, names: string[]): boolean {
  return names.some((name) => {
    const type = (globalThis as Record<string, unknown>)[name];
    return typeof type === 'function' && body instanceof type;
  });
}

/**
 * A stream body (sent as it is read, so once): by shape, so a runtime without a global
 * ReadableStream never throws here.
 */
export function isStreamBody(body: BodyInit | undefined): boolean {
  return typeof (body as ReadableStream | undefined)?.getReader === 'function';
}
