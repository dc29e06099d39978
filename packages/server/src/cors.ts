import vary from 'vary';
import { boolean, checkOptions, integer, keysOf, rangeError, typeError } from './checks';
import type { Context, Middleware } from './context';

/** Options for {@link cors}. */
export interface CorsOptions {
  /**
   * Which origins may read responses:
   * - `'*'`: any (no credentials then);
   * - an origin (`'https://app.example'`) or a list of them, compared exactly;
   * - a RegExp tested against the request's `Origin`;
   * - a function `(origin, ctx) => boolean`.
   *
   * The allowed request origin is echoed in `Access-Control-Allow-Origin` (with
   * `Vary: Origin`), except for `'*'`, which is sent as is.
   *
   * @default '*'
   */
  origin?:
    | '*'
    | string
    | readonly string[]
    | RegExp
    | ((origin: string, ctx: Context) => boolean)
    | undefined;
  /**
   * Send `Access-Control-Allow-Credentials: true` (cookies, HTTP auth). Not with `origin: '*'`:
   * browsers refuse that combination, so it throws here instead.
   *
   * @default false
   */
  credentials?: boolean | undefined;
  /** Methods a preflight allows. @default ['GET', 'HEAD', 'PUT', 'PATCH', 'POST', 'DELETE'] */
  methods?: readonly string[] | undefined;
  /**
   * Request headers a preflight allows.
   *
   * @default the preflight's own Access-Control-Request-Headers, echoed
   */
  allowedHeaders?: readonly string[] | undefined;
  /** Response headers the page may read beyond the safelisted ones. @default none */
  exposedHeaders?: readonly string[] | undefined;
  /** Seconds a browser may cache a preflight (`Access-Control-Max-Age`). @default not sent */
  maxAge?: number | undefined;
}

const DEFAULT_METHODS = ['GET', 'HEAD', 'PUT', 'PATCH', 'POST', 'DELETE'];
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function tokenList(name: string, list: readonly string[] | undefined): string | undefined {
  if (list === undefined) return undefined;
  const what = `cors.${name}`;
  if (!Array.isArray(list)) throw typeError(what, 'an array of header or method names', list);
  for (const item of list) {
    if (typeof item !== 'string') throw typeError(`${what}[]`, 'a header or method name', item);
    if (!TOKEN.test(item)) throw rangeError(`${what}[]`, 'a header or method name', item);
  }
  return list.join(', ');
}

/** Compiles `origin` once: a test of the request's Origin. */
function originTest(origin: CorsOptions['origin']): (value: string, ctx: Context) => boolean {
  if (origin === undefined || origin === '*') return () => true;
  if (typeof origin === 'string') return (value) => value === origin;
  if (origin instanceof RegExp) {
    return (value) => {
      origin.lastIndex = 0;
      return origin.test(value);
    };
  }
  if (typeof origin === 'function') return (value, ctx) => origin(value, ctx) === true;
  if (Array.isArray(origin)) {
    const set = new Set<string>();
    for (const item of origin) {
      if (typeof item !== 'string') throw typeError('cors.origin[]', 'an origin string', item);
      set.add(item);
    }
    return (value) => set.has(value);
  }
  throw typeError('cors.origin', "'*', an origin, an array, a RegExp or a function", origin);
}

/**
 * CORS middleware. A request with an `Origin` gets the `Access-Control-*` response headers when
 * its origin is allowed; a preflight (`OPTIONS` with `Access-Control-Request-Method`) is answered
 * here with 204 and does not reach the routes. Register it first: its headers are set before
 * the handler runs, so error responses (404, 500...) carry them too and the page can read them.
 *
 * @example
 * app.use(cors({ origin: ['https://app.example'], credentials: true, maxAge: 600 }));
 */
const CORS_KEYS = keysOf<CorsOptions>({
  origin: 0,
  credentials: 0,
  methods: 0,
  allowedHeaders: 0,
  exposedHeaders: 0,
  maxAge: 0,
});

export function cors(options: CorsOptions = {}): Middleware {
  checkOptions('cors options', options, CORS_KEYS);
  const any = options.origin === undefined || options.origin === '*';
  const credentials = boolean('cors.credentials', options.credentials, false);
  if (any && credentials) {
    // Browsers refuse the pair: list the origins or pass a function instead.
    throw rangeError(
      'cors.origin',
      "a list of origins, a RegExp or a function with `credentials: true` (browsers refuse '*')",
      '*',
    );
  }
  const allowed = originTest(options.origin);
  const methods = tokenList('methods', options.methods) ?? DEFAULT_METHODS.join(', ');
  const allowedHeaders = tokenList('allowedHeaders', options.allowedHeaders);
  const exposed = tokenList('exposedHeaders', options.exposedHeaders);
  const maxAge =
    options.maxAge === undefined
      ? undefined
      : String(integer('cors.maxAge', options.maxAge, 0, 0, undefined, 'seconds'));

  return (ctx, next) => {
    const origin = ctx.req.headers.origin;
    const res = ctx.res;
    const preflight =
      ctx.method === 'OPTIONS' && ctx.req.headers['access-control-request-method'] !== undefined;
    if (!any) vary(res, 'Origin');
    if (origin === undefined) return next();
    const ok = allowed(origin, ctx);
    if (ok) {
      res.setHeader('access-control-allow-origin', any ? '*' : origin);
      if (credentials) res.setHeader('access-control-allow-credentials', 'true');
    }
    if (!preflight) {
      if (ok && exposed !== undefined) res.setHeader('access-control-expose-headers', exposed);
      return next();
    }
    // A preflight is answered here; without the allow headers (origin refused) the browser
    // blocks the real request.
    if (ok) {
      res.setHeader('access-control-allow-methods', methods);
      const requested = ctx.req.headers['access-control-request-headers'];
      if (allowedHeaders !== undefined) {
        res.setHeader('access-control-allow-headers', allowedHeaders);
      } else if (requested !== undefined) {
        vary(res, 'Access-Control-Request-Headers');
        res.setHeader('access-control-allow-headers', requested);
      }
      if (maxAge !== undefined) res.setHeader('access-control-max-age', maxAge);
    }
    return ctx.status(204).send(null);
  };
}
