// The option-docs check shared by every package's test: an option's doc lives in its type
// (ky-style), so every field of a public option type has a JSDoc sentence and, when optional, a
// `@default`; where a package resolves its defaults from a constant, the documented `@default`
// must be that constant's value. Reads the sources with the TypeScript compiler API.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { runInNewContext } from 'node:vm';
import ts from 'typescript';

/** Every exported interface of `src` (recursively) that `isOptionType(name)` selects. */
export function optionTypes(src, isOptionType) {
  const out = new Map();
  const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter(
    (f) => /\.tsx?$/.test(f) && !/\.test(-d)?\.tsx?$|\.fixture\.ts$/.test(f),
  );
  for (const file of files) {
    const text = readFileSync(join(src, file), 'utf8');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
    for (const node of source.statements) {
      if (!ts.isInterfaceDeclaration(node)) continue;
      const name = node.name.text;
      const exported = node.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
      if (!exported || !isOptionType(name)) continue;
      out.set(name, fieldsOf(node.members, name, source));
    }
  }
  return out;
}

/** The property signatures of `members`, and those of an inline object type one level down. */
function fieldsOf(members, prefix, source) {
  const fields = [];
  for (const member of members) {
    if (!ts.isPropertySignature(member)) continue;
    const path = `${prefix}.${member.name.getText(source)}`;
    const text = ts
      .getJSDocCommentsAndTags(member)
      .map((d) => d.getText(source))
      .join('\n')
      .replace(/^\/\*\*|\*\/$/gm, '')
      .replace(/^\s*\* ?/gm, '');
    const at = text.search(/@default\b/);
    fields.push({
      path,
      optional: member.questionToken !== undefined,
      takesUndefined: member.type !== undefined && takesUndefined(member.type),
      sentence: (at === -1 ? text.replace(/@\w+[\s\S]*$/, '') : text.slice(0, at)).trim(),
      default: at === -1 ? undefined : text.slice(at + '@default'.length).trim(),
    });
    const type = member.type && unwrap(member.type);
    if (type && ts.isTypeLiteralNode(type)) fields.push(...fieldsOf(type.members, path, source));
  }
  return fields;
}

/**
 * Whether a field's written type takes `undefined`: an app compiled with
 * exactOptionalPropertyTypes may pass it (`url: process.env.URL`), and only `undefined` means
 * "not set", so `field?: T` must be written `field?: T | undefined`.
 */
function takesUndefined(type) {
  if (ts.isUnionTypeNode(type)) return type.types.some(takesUndefined);
  if (ts.isParenthesizedTypeNode(type)) return takesUndefined(type.type);
  if (ts.isTypeReferenceNode(type)) return type.typeName.getText() === 'ReactNode';
  return [
    ts.SyntaxKind.UndefinedKeyword,
    ts.SyntaxKind.UnknownKeyword,
    ts.SyntaxKind.AnyKeyword,
  ].includes(type.kind);
}

/** `{ ... } | boolean` -> `{ ... }`: the object form of an option that also takes a switch. */
function unwrap(type) {
  if (!ts.isUnionTypeNode(type)) return type;
  return type.types.find((t) => ts.isTypeLiteralNode(t)) ?? type;
}

/**
 * The value a `@default` text starts with, when it is a literal (`3`, `'cache-first'`,
 * `Infinity`, `['GET', 'HEAD']`, `{ a: 1 }`, in backticks or not); `NOT_A_LITERAL` for prose
 * ("the client's `deadline` (0)").
 */
export const NOT_A_LITERAL = Symbol('not a literal');
export function literalOf(text) {
  const first = text
    .replace(/^`([^`]*)`/, '$1')
    .split('\n')[0]
    .trim();
  for (const candidate of [first, first.replace(/\s+\(.*$/, ''), first.split(/[;,] /)[0]]) {
    if (!/^(['"[{\d-]|Infinity\b|true\b|false\b|null\b|undefined\b)/.test(candidate)) continue;
    try {
      return runInNewContext(`(${candidate})`, Object.create(null), { timeout: 5000 });
    } catch {}
  }
  return NOT_A_LITERAL;
}

/**
 * What is wrong with the docs of `types`: a field without a sentence, an optional field without
 * `@default` or whose type does not take `undefined`, a `@default` that disagrees with
 * `defaults[path]` (path `Type.field`), a path in `defaults` no type declares. Empty when all is
 * well.
 */
export function optionDocProblems(types, defaults = {}) {
  const problems = [];
  const seen = new Set();
  for (const fields of types.values()) {
    for (const field of fields) {
      seen.add(field.path);
      if (field.sentence.length < 10) problems.push(`${field.path}: no JSDoc sentence`);
      if (field.optional && !field.default) problems.push(`${field.path}: no @default`);
      if (field.optional && field.takesUndefined === false) {
        problems.push(
          `${field.path}: optional but does not take undefined (write \`T | undefined\`)`,
        );
      }
      if (!(field.path in defaults) || !field.default) continue;
      const documented = literalOf(field.default);
      const actual = defaults[field.path];
      if (!isDeepStrictEqual(plain(documented), plain(actual))) {
        problems.push(
          `${field.path}: @default ${field.default.split('\n')[0]} but the resolved default is ${JSON.stringify(actual) ?? String(actual)}`,
        );
      }
    }
  }
  for (const path of Object.keys(defaults)) {
    if (!seen.has(path)) problems.push(`${path}: in the defaults table but no option declares it`);
  }
  return problems;
}

/** Frozen arrays and objects from another realm compare as plain values. */
function plain(value) {
  if (value === NOT_A_LITERAL || typeof value !== 'object' || value === null) return value;
  return JSON.parse(JSON.stringify(value));
}

/** `{ field: value }` of a defaults constant as `{ 'Type.field': value }`. */
export function defaultsOf(type, constant) {
  return Object.fromEntries(Object.entries(constant).map(([k, v]) => [`${type}.${k}`, v]));
}
