import { typeError } from '../internal/checks';

/**
 * What fetch gets, and the Content-Type keel adds when the caller set none; null for a form,
 * whose Content-Type fetch writes itself (multipart with its boundary): none may be sent for it.
 */
export interface SerializedBody {
  body: BodyInit | undefined;
  contentType?: string | undefined | null;
}

const SERIALIZABLE = 'a string, binary or form data, or a value JSON.stringify can write';

const NONE: SerializedBody = { body: undefined, contentType: undefined };

/**
 * Body rules: strings, URLSearchParams, FormData, Blob, ArrayBuffer, typed arrays and streams go
 * to fetch as such (fetch sets their Content-Type; a form's must not be replaced by a
 * client-wide one, see resolveRequest); anything else is JSON-stringified and sent
 * as `application/json`. A value JSON cannot represent (BigInt, a cycle, a function) is a
 * TypeError naming the cause.
 *
 * Forms and bytes are copied here, when the request is made, as fetch(url, init) takes them:
 * keel calls fetch later (a scheduler queue, a retry), and the caller may change the object
 * meanwhile. Blobs are immutable and streams read once: neither is copied.
 */
export function serializeBody(body: unknown): SerializedBody {
  if (body === undefined || body === null) return NONE;
  if (typeof body === 'string') return { body, contentType: 'text/plain;charset=UTF-8' };
  const Form = typeOf(body, FORMS) as (new () => FormData) | undefined;
  if (Form) {
    // Entries are strings and Files (immutable): a shallow copy is a snapshot.
    const copy = new Form();
    for (const entry of body as FormData) copy.append(...entry);
    return { body: copy, contentType: null };
  }
  if (body instanceof ArrayBuffer) return { body: body.slice(0) };
  // A view's bytes only (it may cover part of its buffer), as a Uint8Array.
  if (ArrayBuffer.isView(body)) {
    return { body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength).slice() };
  }
  if (typeOf(body, PASS_THROUGH)) return { body: body as BodyInit };
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

/** The body classes fetch takes, by global name (a runtime may lack some). */
const FORMS = ['URLSearchParams', 'FormData'];
const PASS_THROUGH = ['Blob', 'ReadableStream'];

/** The global class of `names` that `body` is an instance of. */
function typeOf(body: unknown, names: string[]): unknown {
  for (const name of names) {
    const type = (globalThis as Record<string, unknown>)[name];
    if (typeof type === 'function' && body instanceof type) return type;
  }
}

/**
 * A stream body (sent as it is read, so once): by shape, so a runtime without a global
 * ReadableStream never throws here.
 */
export function isStreamBody(body: BodyInit | undefined): boolean {
  return typeof (body as ReadableStream | undefined)?.getReader === 'function';
}
