import { runInNewContext } from 'node:vm';
import { describe, expect, test, vi } from 'vitest';
import { errorCodeOf } from './error-code';
import {
  CancelledError,
  CircuitOpenError,
  HttpError,
  isAbortError,
  isCancelledError,
  isCircuitOpenError,
  isHttpError,
  isKeelError,
  isNetworkError,
  isParseError,
  isResponseTooLargeError,
  isTimeoutError,
  KeelError,
  NetworkError,
  ParseError,
  ResponseTooLargeError,
  TimeoutError,
} from './index';

const request = { method: 'GET', url: 'https://a.test/x' };

/** One of each class, as the pipeline builds them. */
function everyError() {
  return [
    new HttpError(request, { status: 500 }),
    new TimeoutError(request, { timeout: 10 }),
    new CancelledError(request),
    new CircuitOpenError(request, { endpoint: 'GET /x' }),
    new ParseError(request, { status: 200, body: '{', cause: new SyntaxError() }),
    new NetworkError(request, { cause: new TypeError('fetch failed') }),
    new ResponseTooLargeError(request, { limit: 1, received: 2, status: 200 }),
  ] as const;
}

const GUARDS = [
  isHttpError,
  isTimeoutError,
  isCancelledError,
  isCircuitOpenError,
  isParseError,
  isNetworkError,
  isResponseTooLargeError,
] as const;

describe('errors', () => {
  test('every error is a KeelError and an Error with a literal name, its method and URL', () => {
    const errors = everyError();
    expect(errors.map((e) => e.name)).toEqual([
      'HttpError',
      'TimeoutError',
      'CancelledError',
      'CircuitOpenError',
      'ParseError',
      'NetworkError',
      'ResponseTooLargeError',
    ]);
    for (const e of errors) {
      expect(e).toBeInstanceOf(KeelError);
      expect(e).toBeInstanceOf(Error);
      expect(isKeelError(e)).toBe(true);
      expect(e).toMatchObject({ method: 'GET', url: 'https://a.test/x' });
      expect(e.message).toContain('(GET https://a.test/x)');
    }
  });

  test('every field is an own enumerable property, in a fixed order, also when undefined', () => {
    expect(everyError().map((e) => Object.keys(e))).toEqual([
      ['name', 'method', 'url', 'status', 'statusText', 'headers', 'data', 'retryAfter'],
      ['name', 'method', 'url', 'timeout', 'kind', 'code'],
      ['name', 'method', 'url'],
      ['name', 'method', 'url', 'endpoint'],
      ['name', 'method', 'url', 'status', 'body'],
      ['name', 'method', 'url', 'code'],
      ['name', 'method', 'url', 'limit', 'received', 'status'],
    ]);
    const bare = new HttpError(request);
    expect(Object.getOwnPropertyDescriptor(bare, 'data')).toEqual({
      value: undefined,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  });

  test('one guard per class: it accepts its class only', () => {
    const errors = everyError();
    GUARDS.forEach((guard, i) => {
      errors.forEach((error, j) => {
        expect(guard(error), `guard ${i} (${error.name})`).toBe(i === j);
      });
    });
  });

  test("a guard accepts an app's subclass; the brand it reads cannot be removed or replaced", () => {
    // The guards read the brand alone (no instanceof): an instance of the class or of a subclass
    // inherits it from the prototype, where it is fixed.
    everyError().forEach((error, i) => {
      const Class = error.constructor as new (...args: unknown[]) => Error;
      class AppError extends Class {}
      const sub = Reflect.construct(Class, [request, { status: 500 }], AppError);
      expect(sub).toBeInstanceOf(Class);
      expect(GUARDS[i]!(sub), error.name).toBe(true);
      expect(isKeelError(sub)).toBe(true);
      const brand = Symbol.for(`keel.core.${error.name}`);
      expect(Object.getOwnPropertyDescriptor(Class.prototype, brand)).toEqual({
        value: true,
        writable: false,
        enumerable: false,
        configurable: false,
      });
      expect(Reflect.deleteProperty(Class.prototype, brand)).toBe(false);
      expect(Reflect.set(Class.prototype, brand, false)).toBe(false);
      expect(GUARDS[i]!(error)).toBe(true);
    });
  });

  test('no guard accepts a look-alike object or a foreign error of the same name', () => {
    const names = everyError().map((e) => e.name);
    GUARDS.forEach((guard, i) => {
      expect(guard({ name: names[i], status: 500, message: 'x' })).toBe(false);
      expect(guard(Object.assign(new Error('x'), { name: names[i] }))).toBe(false);
      expect(guard(null)).toBe(false);
      expect(guard(names[i])).toBe(false);
    });
    expect(isTimeoutError(new DOMException('late', 'TimeoutError'))).toBe(false);
    expect(isKeelError({ name: 'KeelError' })).toBe(false);
  });

  test('guards recognise an instance from another copy of the package (where instanceof fails)', async () => {
    // A second evaluation of the modules: what two bundles, or a second realm, would hold.
    vi.resetModules();
    const copy = await import('./index');
    expect(copy.HttpError).not.toBe(HttpError);
    const foreign = [
      new copy.HttpError(request, { status: 503 }),
      new copy.TimeoutError(request),
      new copy.CancelledError(request),
      new copy.CircuitOpenError(request, { endpoint: 'GET /x' }),
      new copy.ParseError(request, { status: 200, body: '', cause: undefined }),
      new copy.NetworkError(request, { cause: undefined }),
      new copy.ResponseTooLargeError(request, { limit: 1, received: 2, status: 200 }),
    ];
    expect(foreign[0]).not.toBeInstanceOf(HttpError);
    GUARDS.forEach((guard, i) => {
      foreign.forEach((error, j) => {
        expect(guard(error)).toBe(i === j);
      });
    });
    for (const error of foreign) expect(isKeelError(error)).toBe(true);
    expect(isAbortError(foreign[2])).toBe(true);
  });

  test('a brand made in another realm is the same brand (Symbol.for is shared by every realm)', () => {
    const foreign = runInNewContext(`
      const HttpError = class extends Error {};
      Object.defineProperty(HttpError.prototype, Symbol.for('keel.core.HttpError'), { value: true });
      Object.defineProperty(HttpError.prototype, Symbol.for('keel.core.KeelError'), { value: true });
      new HttpError('x');
    `);
    expect(foreign).not.toBeInstanceOf(Error);
    expect(isHttpError(foreign)).toBe(true);
    expect(isKeelError(foreign)).toBe(true);
    expect(isTimeoutError(foreign)).toBe(false);
  });

  test('HttpError fields come from its request and the response', () => {
    const headers = new Headers({ a: 'b' });
    const e = new HttpError(request, {
      status: 404,
      statusText: 'Not Found',
      headers,
      data: { x: 1 },
      retryAfter: 5,
    });
    expect(e).toMatchObject({ status: 404, statusText: 'Not Found', headers, data: { x: 1 } });
    expect(e.retryAfter).toBe(5);
    expect(e.message).toBe('Request failed with status 404 Not Found (GET https://a.test/x)');
    expect(new HttpError(request).status).toBeUndefined();
  });

  test('CircuitOpenError carries the endpoint', () => {
    const e = new CircuitOpenError(request, { endpoint: 'GET /a' });
    expect(e.endpoint).toBe('GET /a');
    expect(e.message).toBe('Circuit open for GET /a (GET https://a.test/x)');
  });

  test('CancelledError keeps its message and cause', () => {
    const cause = new Error('why');
    const e = new CancelledError(request, { message: 'Gone', cause });
    expect(e.cause).toBe(cause);
    expect(e.message).toBe('Gone (GET https://a.test/x)');
    expect(new CancelledError(request).message).toBe('Request cancelled (GET https://a.test/x)');
  });

  test('isAbortError: CancelledError and AbortError, not timeouts or others', () => {
    expect(isAbortError(new CancelledError(request))).toBe(true);
    expect(isAbortError(new DOMException('x', 'AbortError'))).toBe(true);
    expect(isAbortError(Object.assign(new Error('x'), { name: 'AbortError' }))).toBe(true);
    expect(isAbortError(new TimeoutError(request))).toBe(false);
    expect(isAbortError(new Error('x'))).toBe(false);
    expect(isAbortError('AbortError')).toBe(false);
    expect(isAbortError(null)).toBe(false);
  });

  test('NetworkError: code from the cause, ERR_NETWORK when nothing says; method, url, cause', () => {
    const cause = new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
    });
    const e = new NetworkError({ method: 'GET', url: 'http://127.0.0.1:1/x' }, { cause });
    expect(e).toMatchObject({ code: 'ECONNREFUSED', method: 'GET', url: 'http://127.0.0.1:1/x' });
    expect(e.cause).toBe(cause);
    expect(e.message).toBe(
      'Network error ECONNREFUSED (GET http://127.0.0.1:1/x): connect ECONNREFUSED 127.0.0.1:1',
    );
    const bare = new NetworkError(request, { cause: new TypeError('Failed to fetch') });
    expect(bare.code).toBe('ERR_NETWORK');
  });

  test('TimeoutError: kind, limit, request and transport code', () => {
    expect(new TimeoutError(request, { timeout: 50 }).kind).toBe('attempt');
    const d = new TimeoutError(request, { kind: 'deadline', timeout: 1000 });
    expect(d.message).toBe('Request deadline exceeded after 1000 ms (GET https://a.test/x)');
    const t = new TimeoutError(request, { kind: 'transport', code: 'UND_ERR_HEADERS_TIMEOUT' });
    expect(t).toMatchObject({ timeout: undefined, code: 'UND_ERR_HEADERS_TIMEOUT' });
  });

  test('errorCodeOf reads codes defensively through causes, aggregates and redirects', () => {
    const coded = (code: unknown) => Object.assign(new Error('x'), { code });
    expect(errorCodeOf(new TypeError('fetch failed', { cause: coded('ECONNRESET') }))).toBe(
      'ECONNRESET',
    );
    expect(errorCodeOf(new AggregateError([new Error('a'), coded('ECONNREFUSED')]))).toBe(
      'ECONNREFUSED',
    );
    expect(
      errorCodeOf(new TypeError('fetch failed', { cause: new Error('redirect count exceeded') })),
    ).toBe('ERR_TOO_MANY_REDIRECTS');
    expect(errorCodeOf(coded(42))).toBeUndefined();
    expect(errorCodeOf(coded(''))).toBeUndefined();
    expect(errorCodeOf('ECONNRESET')).toBeUndefined();
    expect(errorCodeOf(null)).toBeUndefined();
    const loop: { cause?: unknown } = {};
    loop.cause = loop;
    expect(errorCodeOf(loop)).toBeUndefined();
  });
});

describe('method and url are strings, as typed, on every error', () => {
  test('built without a request (or only a response): empty strings, never undefined', () => {
    const bare = [
      new HttpError(),
      new HttpError({ status: 503 }),
      new TimeoutError(),
      new CancelledError(),
      new CircuitOpenError(),
      new CircuitOpenError({ method: 'GET' } as never, { endpoint: 'GET /x' }), // plain JS
    ];
    for (const e of bare) {
      expect(typeof e.method).toBe('string');
      expect(typeof e.url).toBe('string');
      // What an app written against the `string` type does with them must not throw.
      expect(e.url.startsWith('https://')).toBe(false);
      expect(e.message).not.toMatch(/undefined|\(\s/);
    }
    expect(new CancelledError()).toMatchObject({ method: '', url: '' });
    expect(new HttpError({ status: 503, method: 'PUT', url: 'https://a.test/y' })).toMatchObject({
      method: 'PUT',
      url: 'https://a.test/y',
    });
  });
});
