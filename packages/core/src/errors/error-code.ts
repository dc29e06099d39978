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
  // A value that throws when read (a getter, a revoked Proxy) tells no code: never a throw.
  try {
    // Walks error -> cause -> cause ... (bounded: a cause cycle must not hang).
    for (let depth = 0; depth < 4 && e; depth++) {
      const code = ownCode(e) ?? MESSAGE_CODES.get((e as { message?: unknown }).message);
      if (code !== undefined) return code;
      const errors = (e as { errors?: unknown }).errors;
      if (Array.isArray(errors)) {
        for (const inner of errors) {
          const c = ownCode(inner);
          if (c !== undefined) return c;
        }
      }
      e = (e as { cause?: unknown }).cause;
    }
  } catch {}
  return undefined;
}

/** `e.code` when it is a non-empty string (`e` may be anything). */
function ownCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && code !== '' ? code : undefined;
}

/** undici's failures that carry only a message: a redirect loop or refused redirect, integrity. */
const MESSAGE_CODES: ReadonlyMap<unknown, string> = new Map([
  ['redirect count exceeded', 'ERR_TOO_MANY_REDIRECTS'],
  ['unexpected redirect', 'ERR_UNEXPECTED_REDIRECT'],
  ['integrity mismatch', 'ERR_INTEGRITY_MISMATCH'],
]);

/** What a code says about a failed request: the bits of `CODES` (inlined by bundlers). */
export enum CodeKind {
  NotSent = 1,
  TransportTimeout = 2,
  Permanent = 4,
}

/**
 * The codes keel treats apart. `NotSent`: the request never left, the connection was refused
 * or could not be made (DNS, unreachable, connect timeout); retrying it cannot repeat its
 * effect, so even a POST may retry it. `TransportTimeout`: undici's own timers, the transport
 * gave up waiting (a timeout, not a failure to connect). `Permanent`: failures that are
 * properties of the response, not of the network (a redirect loop, a redirect under
 * `redirect: 'error'`, an integrity mismatch): retrying repeats them.
 */
const CODES: Readonly<Record<string, number>> = {
  ECONNREFUSED: CodeKind.NotSent,
  ENOTFOUND: CodeKind.NotSent,
  EAI_AGAIN: CodeKind.NotSent,
  EHOSTUNREACH: CodeKind.NotSent,
  ENETUNREACH: CodeKind.NotSent,
  UND_ERR_CONNECT_TIMEOUT: CodeKind.NotSent | CodeKind.TransportTimeout,
  UND_ERR_HEADERS_TIMEOUT: CodeKind.TransportTimeout,
  UND_ERR_BODY_TIMEOUT: CodeKind.TransportTimeout,
  ETIMEDOUT: CodeKind.TransportTimeout,
  ERR_TOO_MANY_REDIRECTS: CodeKind.Permanent,
  ERR_UNEXPECTED_REDIRECT: CodeKind.Permanent,
  ERR_INTEGRITY_MISMATCH: CodeKind.Permanent,
};

/** Whether `code` is one of the codes of `kind`; false for undefined and for any other code. */
export function codeIs(code: string | undefined, kind: CodeKind): boolean {
  // An own key only: an inherited one (`constructor`) is no number, and `& kind` makes it 0.
  return ((CODES[code as string] as number) & kind) !== 0;
}
