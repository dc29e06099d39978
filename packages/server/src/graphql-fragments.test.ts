import { buildSchema, NoFragmentCyclesRule, parse, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { fragmentCycles, nestsTooDeepThroughFragments } from './graphql-fragments';

const schema = buildSchema('type Query { a: Query, b: Int }');

describe('fragmentCycles', () => {
  it("reports what graphql-js's NoFragmentCycles reports, in its order, with its nodes", () => {
    for (const query of [
      '{ ...A } fragment A on Query { ...A }',
      '{ ...A } fragment A on Query { a { ...B } } fragment B on Query { ...C } fragment C on Query { ...A ...B }',
      '{ ...A } fragment A on Query { ... on Query { ...B } a { ...C } } fragment B on Query { ...A } fragment C on Query { ...B }',
      'fragment A on Query { ...B } fragment B on Query { b } fragment A on Query { ...A }',
      '{ ...A } fragment A on Query { ...Missing b }',
      '{ ...A } fragment A on Query { ...B } fragment B on Query { b }',
    ]) {
      const document = parse(query);
      const expected = validate(schema, document, [NoFragmentCyclesRule]).map((e) => ({
        message: e.message,
        locations: e.locations,
      }));
      const got = fragmentCycles(document).map((e) => ({
        message: e.message,
        locations: e.locations,
      }));
      expect(got, query).toEqual(expected);
    }
  });
});

describe('nestsTooDeepThroughFragments', () => {
  it('counts selection sets through spreads, each fragment from where it is spread', () => {
    // `{ a { ...F } }`: F's selection is at level 3, its `a { b }` at 4.
    const document = parse('{ a { ...F } } fragment F on Query { a { b } }');
    expect(nestsTooDeepThroughFragments(document, 3)).toBe(true);
    expect(nestsTooDeepThroughFragments(document, 4)).toBe(false);
    // The same fragment reached again, deeper (at level 3: its `b` at 5): measured once.
    const twice = parse('{ ...F a { a { ...F } } } fragment F on Query { a { b } }');
    expect(nestsTooDeepThroughFragments(twice, 4)).toBe(true);
    expect(nestsTooDeepThroughFragments(twice, 5)).toBe(false);
    // A fragment defined and never used counts too, from its own selection.
    expect(nestsTooDeepThroughFragments(parse('fragment F on Query { a { a { b } } }'), 2)).toBe(
      true,
    );
  });
});
