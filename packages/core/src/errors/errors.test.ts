import { describe, expect, test } from 'vitest';
import { errorCodeOf } from './error-code';
import {
  CancelledError,
  CircuitOpenError,
  HttpError,
  isAbortError,
  isHttpError,
  isNetworkError,
  isTimeoutError,
  KeelError,
  NetworkError,
  ParseError,
  TimeoutError,
} from './index';

describe('errors', () => {
  test('every error is a KeelError and an Error with an explicit name', () => {
    const errors = [
      new HttpError({ status: 500 }),
      new TimeoutError(10),
      new CancelledError(),
      new CircuitOpenError('GET /x'),
      new ParseError(200, '{', new SyntaxError()),
      new NetworkError({ cause: new TypeError('fetch failed') }),
    ];
    expect(errors.map((e) => e.name)).toEqual([
      'HttpError',
      'TimeoutError',
      'CancelledError',
      'CircuitOpenError',
      'ParseError',
      'NetworkError',
    ]);
    for (const e of errors) {
      expect(e).toBeInstanceOf(KeelError);
      expect(e).toBeInstanceOf(Error);
    }
  });

  test('HttpError fields, from an init object or positional arguments', () => {
    const headers = new Headers({ a: 'b' });
    const a = new HttpError({ status: 404, statusText: 'Not Found', headers, data: { x: 1 } });
    expect(a).toMatchObject({ status: 404, statusText: 'Not Found', headers, data: { x: 1 } });
    const b = new HttpError(503, 'Unavailable', headers, 'body');
    expect(b).toMatchObject({ status: 503, statusText: 'Unavailable', headers, data: 'body' });
    expect(new HttpError().status).toBeUndefined();
  });

  test('CircuitOpenError carries the endpoint', () => {
    expect(new CircuitOpenError('GET /a').endpoint).toBe('GET /a');
  });

  test('CancelledError keeps its cause', () => {
    const cause = new Error('why');
    expect(new CancelledError('x', { cause }).cause).toBe(cause);
  });

  test('isAbortError: CancelledError and AbortError, not timeouts or others', () => {
    expect(isAbortError(new CancelledError())).toBe(true);
    expect(isAbortError(new DOMException('x', 'AbortError'))).toBe(true);
    expect(isAbortError(Object.assign(new Error('x'), { name: 'AbortError' }))).toBe(true);
    expect(isAbortError(new TimeoutError())).toBe(false);
    expect(isAbortError(new Error('x'))).toBe(false);
    expect(isAbortError('AbortError')).toBe(false);
    expect(isAbortError(null)).toBe(false);
  });

  test('guards work across realms by name', () => {
    expect(isHttpError({ name: 'HttpError', status: 1 })).toBe(true);
    expect(isTimeoutError({ name: 'TimeoutError' })).toBe(true);
    expect(isHttpError(new TimeoutError())).toBe(false);
  });

  test('NetworkError: code from the cause, ERR_NETWORK when nothing says; method, url, cause', () => {
    const cause = new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
    });
    const e = new NetworkError({ cause, method: 'GET', url: 'http://127.0.0.1:1/x' });
    expect(e).toMatchObject({ code: 'ECONNREFUSED', method: 'GET', url: 'http://127.0.0.1:1/x' });
    expect(e.cause).toBe(cause);
    expect(e.message).toBe(
      'Network error ECONNREFUSED (GET http://127.0.0.1:1/x): connect ECONNREFUSED 127.0.0.1:1',
    );
    expect(new NetworkError({ cause: new TypeError('Failed to fetch') }).code).toBe('ERR_NETWORK');
    expect(isNetworkError(e)).toBe(true);
    expect(isNetworkError({ name: 'NetworkError' })).toBe(true);
    expect(isNetworkError(new TypeError('x'))).toBe(false);
  });

  test('TimeoutError: kind, limit, request and transport code', () => {
    expect(new TimeoutError(50).kind).toBe('attempt');
    const d = new TimeoutError(1000, { kind: 'deadline', method: 'GET', url: 'https://a.test/' });
    expect(d.message).toBe('Request deadline exceeded after 1000 ms (GET https://a.test/)');
    const t = new TimeoutError(undefined, { kind: 'transport', code: 'UND_ERR_HEADERS_TIMEOUT' });
    expect(t).toMatchObject({ timeout: undefined, code: 'UND_ERR_HEADERS_TIMEOUT' });
    expect(isTimeoutError(t)).toBe(true);
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
