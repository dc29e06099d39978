import { describe, expect, it } from 'vitest';
import { BadRequestError } from './errors';
import { validate } from './validate';

function issues(fn: () => unknown) {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(BadRequestError);
    return (err as BadRequestError).fields;
  }
  throw new Error('expected a BadRequestError');
}

describe('validate (unit)', () => {
  const rules = {
    name: { type: 'string', required: true, min: 2, max: 10 },
    email: { type: 'email', required: true },
    age: { type: 'integer', min: 0, max: 150 },
    score: { type: 'number' },
    admin: { type: 'boolean' },
    role: { type: 'string', enum: ['user', 'mod'] },
    code: { type: 'string', pattern: '^[A-Z]{3}$' },
  } as const;

  it('returns only declared fields, coerced', () => {
    const out = validate(rules, {
      name: 'Ada',
      email: 'ada@example.com',
      age: '36',
      score: '1.5e2',
      admin: 'false',
      role: 'mod',
      code: 'ABC',
      extra: 'dropped',
    });
    expect(out).toEqual({
      name: 'Ada',
      email: 'ada@example.com',
      age: 36,
      score: 150,
      admin: false,
      role: 'mod',
      code: 'ABC',
    });
    const name: string = out.name;
    expect(name).toBe('Ada');
  });

  it('lists every failing field and rule', () => {
    const fields = issues(() =>
      validate(rules, {
        name: 'A',
        email: 'not-an-email',
        age: '3.5',
        score: 'NaN',
        admin: 'yes',
        role: 'root',
        code: 'abcd',
      }),
    );
    expect(fields).toEqual([
      { field: 'name', rule: 'min', message: 'must be at least 2 characters' },
      { field: 'email', rule: 'type', message: 'must be a valid email address' },
      { field: 'age', rule: 'type', message: 'must be an integer' },
      { field: 'score', rule: 'type', message: 'must be a number' },
      { field: 'admin', rule: 'type', message: 'must be a boolean' },
      { field: 'role', rule: 'enum', message: 'must be one of: user, mod' },
      { field: 'code', rule: 'pattern', message: 'does not match the expected format' },
    ]);
    expect(issues(() => validate(rules, {}))).toEqual([
      { field: 'name', rule: 'required', message: 'is required' },
      { field: 'email', rule: 'required', message: 'is required' },
    ]);
    expect(issues(() => validate({ n: { type: 'number', min: 1, max: 2 } }, { n: 5 }))).toEqual([
      { field: 'n', rule: 'max', message: 'must be <= 2' },
    ]);
  });

  it('never lets __proto__ / constructor through and never reads inherited keys', () => {
    const hostile = JSON.parse(
      '{"__proto__":{"isAdmin":true},"constructor":{"prototype":{"isAdmin":true}},"name":"x"}',
    );
    const out = validate({ name: { type: 'string' }, toString: { type: 'string' } }, hostile);
    expect(out).toEqual({ name: 'x' });
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    expect(() => validate({ __proto__: { type: 'string' } } as never, {})).not.toThrow();
    expect(() => validate(JSON.parse('{"__proto__":{"type":"string"}}'), {})).toThrow(RangeError);
    expect(() => validate({ constructor: { type: 'string' } }, {})).toThrow(
      /field names other than __proto__/,
    );
  });

  it('rejects objects, arrays and non-objects as data or values', () => {
    expect(issues(() => validate({ a: { required: true } }, [1, 2]))).toEqual([
      { field: 'a', rule: 'required', message: 'is required' },
    ]);
    expect(issues(() => validate({ a: {} }, { a: { nested: 1 } }))).toEqual([
      { field: 'a', rule: 'type', message: 'must be a string, number or boolean' },
    ]);
    expect(issues(() => validate({ a: { type: 'string' } }, { a: ['x'] }))[0]?.rule).toBe('type');
    expect(
      issues(() => validate({ e: { type: 'email' } }, { e: `${'a'.repeat(250)}@b.co` })),
    ).toHaveLength(1);
  });

  it('checks rules once with clear errors', () => {
    expect(() => validate({ a: { type: 'date' } } as never, {})).toThrow(
      /keel: `rules.a.type` must be one of 'string', 'email', 'number', 'integer', 'boolean', got "date"/,
    );
    expect(() => validate({ a: { minimum: 1 } } as never, {})).toThrow(
      /`rules.a` must be an object with only the keys type, required, .*, got "minimum" \(did you mean `min`\?\)$/,
    );
    expect(() => validate({ a: { min: '1' } } as never, {})).toThrow(
      /`rules.a.min` must be a number, got "1"/,
    );
  });

  it('resets stateful patterns', () => {
    const r = { c: { type: 'string', pattern: /^a/g } } as const;
    expect(validate(r, { c: 'abc' })).toEqual({ c: 'abc' });
    expect(validate(r, { c: 'abc' })).toEqual({ c: 'abc' });
  });

  it('a rules object is checked at each use until its second, then cached by identity; one made per call is checked every time', () => {
    /** Rules whose key list is counted: each compile reads it once. */
    const counted = () => {
      const count = { reads: 0 };
      const rules = new Proxy({ name: { type: 'string', required: true } } as const, {
        ownKeys(target) {
          count.reads++;
          return Reflect.ownKeys(target);
        },
      });
      return { rules, count };
    };
    // Two rules objects kept apart (two routes), used in turns: each is compiled twice, then
    // read from the cache.
    const a = counted();
    const b = counted();
    for (let i = 0; i < 5; i++) {
      expect(validate(a.rules, { name: 'x' })).toEqual({ name: 'x' });
      expect(validate(b.rules, { name: 'y' })).toEqual({ name: 'y' });
    }
    expect([a.count.reads, b.count.reads]).toEqual([2, 2]);
    // Rules written in the call are a new object each time: each is checked, so bad ones throw
    // every time, naming the rule.
    for (let i = 0; i < 3; i++) {
      expect(() => validate({ name: { type: 'text' } } as never, {})).toThrow(
        /`rules\.name\.type` must be one of 'string', 'email'/,
      );
    }
  });
});
