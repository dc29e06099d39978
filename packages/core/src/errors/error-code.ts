/**
 * The platform code of a failed fetch, read defensively from the error and its causes (no
 * `node:` import: core runs in browsers too). undici rejects with `TypeError('fetch failed')`
 * (or `'terminated'` mid-body) whose `cause` carries the code: `ECONNREFUSED`, `ECONNRESET`,
 * `ENOTFOUND`, `UND_ERR_SOCKET`, `UND_ERR_HEADERS_TIMEOUT`, ...; a refused dual-stack connect
 * is an AggregateError whose `errors` carry it. undici's redirect and integrity failures carry
 * only a message, mapped to `ERR_TOO_MANY_REDIRECTS`, `ERR_UNEXPECTED_REDIRECT` and
 * `ERR_INTEGRITY_MISMATCH`. Undefined when nothing says (a browser's "Failed to fetch" never
 * does).
 */
export function errorCodeOf(error: unknown): string | undefined {
  let e: unknown = error;
  // Walks error -> cause -> cause ... (bounded: a cause cycle must not hang).
  for (let depth = 0; depth < 4 && typeof e === 'object' && e !== null; depth++) {
    const code = ownCode(e);
    if (code !== undefined) return code;
    const message = (e as { message?: unknown }).message;
    if (message === 'redirect count exceeded') return 'ERR_TOO_MANY_REDIRECTS';
    if (message === 'unexpected redirect') return 'ERR_UNEXPECTED_REDIRECT';
    if (message === 'integrity mismatch') return 'ERR_INTEGRITY_MISMATCH';
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors)) {
      for (const inner of errors) {
        const c = typeof inner === 'object' && inner !== null ? ownCode(inner) : undefined;
        if (c !== undefined) return c;
      }
    }
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

function ownCode(e: object): string | undefined {
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' && code !== '' ? code : undefined;
}

/**
 * Codes that mean the request never left: the connection was refused or could not be made
 * (DNS, unreachable, connect timeout). Retrying such a request cannot repeat its effect, so even
 * a POST may retry it.
 */
const NOT_SENT: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

export function isNotSentCode(code: string | undefined): boolean {
  return code !== undefined && NOT_SENT.has(code);
}

/**
 * Failures that are properties of the response, not of the network (a redirect loop, a redirect
 * under `redirect: 'error'`, an integrity mismatch): retrying repeats them.
 */
export function isPermanentCode(code: string | undefined): boolean {
  return (
    code === 'ERR_TOO_MANY_REDIRECTS' ||
    code === 'ERR_UNEXPECTED_REDIRECT' ||
    code === 'ERR_INTEGRITY_MISMATCH'
  );
}
