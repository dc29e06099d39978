import { describe, expect, it } from 'vitest';
import {
  errorText,
  hidePasswords,
  integer,
  mustBe,
  oneOf,
  rangeError,
  shown,
  typeError,
  unserializable,
} from './checks';

describe('checks', () => {
  it('shows a bad value as written, or by kind', () => {
    expect(shown(-1)).toBe('-1');
    expect(shown(Number.NaN)).toBe('NaN');
    expect(shown('1')).toBe('"1"');
    expect(shown('x'.repeat(100))).toBe(`"${'x'.repeat(60)}..."`);
    expect(shown(null)).toBe('null');
    expect(shown(undefined)).toBe('undefined');
    expect(shown(true)).toBe('true');
    expect(shown(() => 1)).toBe('a function');
    expect(shown([1])).toBe('an array');
    expect(shown({ a: 1 })).toBe('an object');
    expect(shown(/a/g)).toBe('/a/g');
    expect(shown(Symbol('s'))).toBe('a symbol');
    expect(shown(10n)).toBe('10');
  });

  it('hides URL passwords in what it shows, and in any text', () => {
    expect(shown('redis://u:hunter2@h:6379/1')).toBe('"redis://u:***@h:6379/1"');
    expect(shown('rediss://:hunter2@h')).toBe('"rediss://:***@h"');
    // Cut after hiding: a long password keeps no piece before the cut.
    expect(shown(`http://u:${'p'.repeat(80)}@h`)).toBe('"http://u:***@h"');
    expect(hidePasswords('connect ENOENT /u:hunter2@127.0.0.1:6379')).toBe(
      'connect ENOENT /u:***@127.0.0.1:6379',
    );
    // An `@` in the password: hidden whole.
    expect(hidePasswords('redis://u:p@ss@h:1 and more')).toBe('redis://u:***@h:1 and more');
    // No password: as it is.
    for (const text of [
      'redis://u@h:6379',
      'connect ECONNREFUSED 127.0.0.1:6379',
      'mail a@b.example',
      'redis://h:6379/0',
    ]) {
      expect(hidePasswords(text)).toBe(text);
    }
  });

  it('quotes an error for a warning one way: message, code, password hidden', () => {
    expect(errorText(new Error('redis://u:hunter2@h down'))).toBe('redis://u:***@h down');
    // A connect's AggregateError has no message: its code and name say what failed.
    const refused = Object.assign(new AggregateError([]), { code: 'ECONNREFUSED' });
    expect(errorText(refused)).toBe('ECONNREFUSED: AggregateError');
    // A code already in the message is not repeated.
    const named = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), {
      code: 'ECONNREFUSED',
    });
    expect(errorText(named)).toBe('connect ECONNREFUSED 127.0.0.1:1');
    expect(errorText('store at rediss://:pw@h failed')).toBe('store at rediss://:***@h failed');
    expect(errorText(42)).toBe('42');
  });

  it("hides a URL password in the cause's text an unserializable-data error quotes", () => {
    const cause = new Error('fetch failed: redis://u:hunter2@h:6379\nretry');
    const err = unserializable('event "n"', {}, cause);
    expect(err.message).toBe(
      'keel: `data` of event "n" must be a string or JSON-serializable, got an object (fetch failed: redis://u:***@h:6379 retry)',
    );
    expect(err.cause).toBe(cause);
  });

  it('has one template; TypeError for the type, RangeError for the value', () => {
    expect(mustBe('bodyLimit', 'a positive integer', -1)).toBe(
      'keel: `bodyLimit` must be a positive integer, got -1',
    );
    const cause = new Error('why');
    expect(typeError('a', 'b', 'c', cause)).toMatchObject({ name: 'TypeError', cause });
    expect(rangeError('a', 'b', 'c')).toBeInstanceOf(RangeError);
  });

  it('integer: the fallback when undefined, else a checked integer with its unit', () => {
    expect(integer('n', undefined, 7, 0)).toBe(7);
    expect(integer('n', 0, 7, 0)).toBe(0);
    expect(() => integer('bodyLimit', -1, 7, 0, undefined, 'bytes')).toThrow(
      new RangeError('keel: `bodyLimit` must be a non-negative integer number of bytes, got -1'),
    );
    expect(() => integer('n', '1', 7, 1)).toThrow(
      new TypeError('keel: `n` must be a positive integer, got "1"'),
    );
    expect(() => integer('n', 1.5, 7, 2)).toThrow(/an integer >= 2, got 1.5/);
    expect(() => integer('q', 12, 4, 0, 11)).toThrow(/an integer in 0-11, got 12/);
    expect(() => integer('n', Number.NaN, 7, 0)).toThrow(RangeError);
  });

  it('oneOf: a listed string', () => {
    expect(oneOf('d', 'deny', ['ignore', 'deny'])).toBe('deny');
    expect(() => oneOf('d', 'x', ['ignore', 'deny'])).toThrow(
      new RangeError(`keel: \`d\` must be one of 'ignore', 'deny', got "x"`),
    );
    expect(() => oneOf('d', 1, ['ignore'])).toThrow(TypeError);
  });
});
