import { describe, expect, it } from 'vitest';
import { CancelledError } from '../errors/cancelled-error';
import { CircuitOpenError } from '../errors/circuit-open-error';
import { HttpError } from '../errors/http-error';
import { ParseError } from '../errors/parse-error';
import { TimeoutError } from '../errors/timeout-error';
import { classifyError, isCountableFailure } from './outcome';

describe('classifyError', () => {
  it('countable: 5xx, 429, timeouts, network errors', () => {
    for (const e of [
      new HttpError(500),
      new HttpError(599),
      new HttpError(429),
      new HttpError(),
      new TimeoutError(1),
      new TypeError('fetch failed'),
      new Error('ECONNRESET'),
      'a thrown string',
    ]) {
      expect(classifyError(e), String(e)).toBe('failure');
      expect(isCountableFailure(e)).toBe(true);
    }
  });

  it('answered: other 4xx and unparsable bodies', () => {
    for (const e of [400, 401, 403, 404, 408, 409, 418, 422, 451].map((s) => new HttpError(s))) {
      expect(classifyError(e), String(e.status)).toBe('answered');
    }
    expect(classifyError(new ParseError(200, '{', undefined))).toBe('answered');
  });

  it('neutral: cancellation, aborts, gate rejections', () => {
    expect(classifyError(new CancelledError())).toBe('neutral');
    expect(classifyError(new DOMException('x', 'AbortError'))).toBe('neutral');
    expect(classifyError(new CircuitOpenError('GET /a'))).toBe('neutral');
    // Cross-realm: recognised by name.
    expect(classifyError({ name: 'HttpError', status: 404 })).toBe('answered');
  });
});
