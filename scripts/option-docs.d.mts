/** One field of a public option type, as its JSDoc documents it. */
export interface OptionField {
  /** `Type.field`, or `Type.field.sub` for a field of an inline object type. */
  readonly path: string;
  readonly optional: boolean;
  /** Whether the written type takes `undefined` (`T | undefined`, `unknown`, `ReactNode`). */
  readonly takesUndefined?: boolean;
  /** The JSDoc text before any tag. */
  readonly sentence: string;
  /** The text after `@default`; undefined without one. */
  readonly default: string | undefined;
}

/** Every exported interface of `src` (recursively) that `isOptionType(name)` selects. */
export function optionTypes(
  src: string,
  isOptionType: (name: string) => boolean,
): Map<string, OptionField[]>;

export const NOT_A_LITERAL: unique symbol;

/** The value a `@default` text starts with when it is a literal, else NOT_A_LITERAL. */
export function literalOf(text: string): unknown;

/**
 * What is wrong with the docs of `types`: a field without a sentence, an optional field without
 * `@default` or whose type does not take `undefined`, a `@default` that disagrees with
 * `defaults[path]`, a path in `defaults` that no type declares. Empty when all is well.
 */
export function optionDocProblems(
  types: Map<string, OptionField[]>,
  defaults?: Record<string, unknown>,
): string[];

/** `{ field: value }` of a defaults constant as `{ 'Type.field': value }`. */
export function defaultsOf(type: string, constant: object): Record<string, unknown>;
