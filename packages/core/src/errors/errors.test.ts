import { describe, expect, test } from 'vitest';
import {
  CancelledError,
  CircuitOpenError,
  HttpError,
  isAbortError,
  isHttpError,
  isTimeoutError,
  KeelError,
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
    ];
    expect(errors.map((e) => e.name)).toEqual([
      'HttpError',
      'TimeoutError',
      'CancelledError',
      'CircuitOpenError',
      'ParseError',
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
});
