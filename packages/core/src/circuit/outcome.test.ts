import { describe, expect, it } from 'vitest';
import { errorOf, REQUEST } from '../errors/errors.fixture';
import { NetworkError } from '../errors/network-error';
import { classifyError, isCountableFailure } from './outcome';

describe('classifyError', () => {
  it('countable: 5xx, 429, timeouts, network errors', () => {
    for (const e of [
      errorOf.http(500),
      errorOf.http(599),
      errorOf.http(429),
      errorOf.http(),
      errorOf.timeout(1),
      new TypeError('fetch failed'),
      new Error('ECONNRESET'),
      'a thrown string',
    ]) {
      expect(classifyError(e), String(e)).toBe('failure');
      expect(isCountableFailure(e)).toBe(true);
    }
  });

  it('answered: other 4xx and unparsable bodies', () => {
    for (const e of [400, 401, 403, 404, 408, 409, 418, 422, 451].map((s) => errorOf.http(s))) {
      expect(classifyError(e), String(e.status)).toBe('answered');
    }
    expect(classifyError(errorOf.parse(200, '{', undefined))).toBe('answered');
    // The caller's redirect or integrity setting refused an answer the endpoint gave.
    for (const code of [
      'ERR_UNEXPECTED_REDIRECT',
      'ERR_TOO_MANY_REDIRECTS',
      'ERR_INTEGRITY_MISMATCH',
    ]) {
      expect(classifyError(new NetworkError(REQUEST, { cause: undefined, code })), code).toBe(
        'answered',
      );
    }
    expect(classifyError(new NetworkError(REQUEST, { cause: undefined, code: 'ECONNRESET' }))).toBe(
      'failure',
    );
  });

  it('neutral: cancellation, aborts, gate rejections', () => {
    expect(classifyError(errorOf.cancelled())).toBe('neutral');
    expect(classifyError(new DOMException('x', 'AbortError'))).toBe('neutral');
    expect(classifyError(errorOf.circuitOpen('GET /a'))).toBe('neutral');
    // Recognised by brand (another copy of the package too), never by a look-alike's name: an
    // object that only says it is a 404 counts like any other unknown error.
    expect(classifyError({ name: 'HttpError', status: 404 })).toBe('failure');
  });
});
