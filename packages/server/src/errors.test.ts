import { describe, expect, it } from 'vitest';
import {
  BadRequestError,
  BodyTooLargeError,
  HttpException,
  isBadRequestError,
  isBodyTooLargeError,
  isHttpException,
  isReleasedContextError,
  ReleasedContextError,
} from './errors';
import { HubPublishError, isHubPublishError } from './hub-errors';

describe('server errors', () => {
  it('each class has its literal name and its own guard', () => {
    const errors = [
      new HttpException(404),
      new BadRequestError(),
      new HubPublishError('e', 'closed'),
      new ReleasedContextError('json()'),
    ];
    expect(errors.map((e) => e.name)).toEqual([
      'HttpException',
      'BadRequestError',
      'HubPublishError',
      'ReleasedContextError',
    ]);
    const guards = [isHttpException, isBadRequestError, isHubPublishError, isReleasedContextError];
    expect(guards.map((guard) => errors.map((e) => guard(e)))).toEqual([
      [true, true, true, false],
      [false, true, false, false],
      [false, false, true, false],
      [false, false, false, true],
    ]);
  });

  it('guards read the brand, not the name: a look-alike object is not an error of ours', () => {
    for (const name of ['HttpException', 'BadRequestError', 'HubPublishError']) {
      const fake = { name, status: 400, message: 'x' };
      expect(isHttpException(fake) || isBadRequestError(fake) || isHubPublishError(fake)).toBe(
        false,
      );
    }
    expect(isReleasedContextError({ name: 'ReleasedContextError' })).toBe(false);
    expect(isHttpException(null)).toBe(false);
    expect(isHttpException('HttpException')).toBe(false);
  });

  it('guards recognise an instance from another copy of the package', async () => {
    const other = (await import(
      /* @vite-ignore */ `./errors.ts?copy=${Date.now()}`
    )) as typeof import('./errors');
    expect(other.HttpException).not.toBe(HttpException);
    const foreign = new other.BadRequestError('x');
    expect(foreign).not.toBeInstanceOf(HttpException);
    expect(isHttpException(foreign)).toBe(true);
    expect(isBadRequestError(foreign)).toBe(true);
    expect(isReleasedContextError(new other.ReleasedContextError('next()'))).toBe(true);
    const large = new other.BodyTooLargeError(8);
    expect(large).not.toBeInstanceOf(BodyTooLargeError);
    expect(isBodyTooLargeError(large)).toBe(true);
  });

  it('one constructor form: what it is about, the message, then options', () => {
    const cause = new Error('db down');
    const e = new HttpException(503, 'Try later', { cause, headers: { 'retry-after': '30' } });
    expect(e).toMatchObject({ status: 503, message: 'Try later', cause });
    expect(e.headers).toEqual({ 'retry-after': '30' });
    expect(new HttpException(404).message).toBe('Not Found');
    expect(e.toJSON()).toEqual({ status: 503, error: 'Service Unavailable', message: 'Try later' });

    const fields = [{ field: 'a', rule: 'required' as const, message: 'is required' }];
    const bad = new BadRequestError('Validation failed', { fields, cause });
    expect(bad).toMatchObject({ status: 400, fields, cause });
    expect(bad.toJSON()).toEqual({
      status: 400,
      error: 'Bad Request',
      message: 'Validation failed',
      fields,
    });
    expect(new BadRequestError().toJSON()).toEqual({
      status: 400,
      error: 'Bad Request',
      message: 'Bad Request',
    });

    const publish = new HubPublishError('todo-added', 'store', { cause });
    expect(publish).toMatchObject({ status: 503, event: 'todo-added', reason: 'store', cause });
    expect(publish).toBeInstanceOf(HttpException);
  });

  it('a message that is not a string, a limit that is no byte count: typed errors naming them', () => {
    expect(() => new HttpException(404, 42 as never)).toThrow(
      new TypeError('keel: `message` must be a string, got 42'),
    );
    expect(() => new BadRequestError(null as never)).toThrow(
      new TypeError('keel: `message` must be a string, got null'),
    );
    expect(() => new BodyTooLargeError(1024, {} as never)).toThrow(TypeError);
    const bytes = 'a non-negative integer number of bytes';
    for (const limit of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new BodyTooLargeError(limit)).toThrow(
        new RangeError(`keel: \`limit\` must be ${bytes}, got ${limit}`),
      );
    }
    expect(() => new BodyTooLargeError(undefined as never)).toThrow(
      new TypeError(`keel: \`limit\` must be ${bytes}, got undefined`),
    );
    expect(new BodyTooLargeError(0).message).toBe('Request body exceeds 0 bytes');
    expect(new HttpException(404, undefined).message).toBe('Not Found');
  });
});
