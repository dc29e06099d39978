import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/** The repository root. */
export const ROOT = join(import.meta.dirname, '..');

/** The READMEs whose code blocks are checked: the root one and each package's (what npm shows). */
export const READMES = [
  'README.md',
  'packages/core/README.md',
  'packages/react/README.md',
  'packages/server/README.md',
  'packages/devtools/README.md',
];

/** Block languages compiled as TypeScript modules. */
const CODE = new Set(['ts', 'tsx', 'js', 'jsx']);

/** One fenced code block of a README. */
export interface Block {
  readme: string;
  /** 1-based line of the block's first code line in the README. */
  line: number;
  lang: string;
  /** Words after the language in the info string (`run`). */
  meta: string[];
  code: string;
  /** The hidden context block (inside an HTML comment): not a block of its own. */
  context: boolean;
}

/**
 * Every fenced block of a README, with its language and line. A fence inside an HTML comment
 * that starts with `<!-- readme-context` is the README's context (see README "Code blocks").
 */
export function blocksOf(readme: string): Block[] {
  const lines = readFileSync(join(ROOT, readme), 'utf8').split('\n');
  const blocks: Block[] = [];
  let inContext = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim().startsWith('<!-- readme-context')) inContext = true;
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)\s*(.*)$/.exec(line);
    if (open === null) {
      if (inContext && line.includes('-->')) inContext = false;
      continue;
    }
    const [, indent, fence, lang = '', rest = ''] = open;
    const code: string[] = [];
    let j = i + 1;
    while (j < lines.length && !lines[j]!.trimStart().startsWith(fence!)) {
      code.push(lines[j]!.slice(indent!.length));
      j++;
    }
    blocks.push({
      readme,
      line: i + 2,
      lang,
      meta: rest.split(/\s+/).filter(Boolean),
      code: code.join('\n'),
      context: inContext,
    });
    i = j;
  }
  return blocks;
}

export function isCode(block: Block): boolean {
  return CODE.has(block.lang) && !block.context;
}

/** A block made into a module: the README's context around it, and where its lines went. */
export interface Module {
  block: Block;
  /** File name (tsx for every language: JSX may appear in any block of a React README). */
  name: string;
  source: string;
  /** Line (1-based) of the module where the block's first line is. */
  firstLine: number;
}

/**
 * The module for a block. Imports of the block and of the context are hoisted (a context import
 * is dropped when the block imports or declares the same name), and so are the block's
 * `declare` statements (a signature written `declare function useQuery<T>(...): ...`); the
 * context's other statements come next; the block's other statements go in a nested scope, so
 * it may declare a name the context declares (`const client = ...` over a context
 * `declare const client`).
 */
export function moduleOf(block: Block, context: Block | undefined, index: number): Module {
  const own = splitImports(block.code);
  const ctx = context
    ? splitImports(context.code)
    : { imports: [], declarations: [], body: '', bodyLines: [], names: new Set<string>() };
  const imports = [...own.imports, ...own.declarations];
  for (const decl of ctx.imports) {
    const kept = withoutNames(decl, own.names);
    if (kept !== undefined) imports.push(kept);
  }
  const ownNames = own.names;
  imports.push(...ctx.declarations.filter((d) => ![...ownNames].some((n) => declares(d, n))));
  const head = [...imports, ctx.body, 'export {};', '{'].join('\n');
  const firstLine = head.split('\n').length + 1;
  const slug = block.readme.replace(/[^\w]+/g, '_');
  return {
    block,
    name: `${slug}_${String(index).padStart(2, '0')}_l${block.line}.tsx`,
    source: `${head}\n${own.bodyLines.join('\n')}\n}\n`,
    firstLine,
  };
}

interface Split {
  imports: string[];
  /** `declare` statements (signatures). */
  declarations: string[];
  body: string;
  bodyLines: string[];
  /** Names imported or declared by those. */
  names: Set<string>;
}

/**
 * Import declarations and `declare` statements apart from the rest (the rest keeps its line
 * positions: what was taken out is blanked).
 */
function splitImports(code: string): Split {
  const file = ts.createSourceFile('x.tsx', code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TSX);
  const imports: string[] = [];
  const declarations: string[] = [];
  const names = new Set<string>();
  const lines = code.split('\n');
  const blank = (statement: ts.Statement) => {
    const start = file.getLineAndCharacterOfPosition(statement.getStart(file)).line;
    const end = file.getLineAndCharacterOfPosition(statement.getEnd()).line;
    for (let l = start; l <= end; l++) lines[l] = '';
  };
  /** Blanks one keyword in place (its line keeps its length and the others their positions). */
  const blankKeyword = (keyword: ts.Node) => {
    const at = file.getLineAndCharacterOfPosition(keyword.getStart(file));
    const line = lines[at.line]!;
    const width = keyword.getEnd() - keyword.getStart(file);
    lines[at.line] =
      line.slice(0, at.character) + ' '.repeat(width) + line.slice(at.character + width);
  };
  for (const statement of file.statements) {
    const modifiers = ts.canHaveModifiers(statement) ? (ts.getModifiers(statement) ?? []) : [];
    if (modifiers.some((m) => m.kind === ts.SyntaxKind.DeclareKeyword)) {
      declarations.push(statement.getText(file));
      const name = (statement as { name?: ts.Identifier }).name;
      if (name !== undefined && ts.isIdentifier(name)) names.add(name.text);
      blank(statement);
      continue;
    }
    if (!ts.isImportDeclaration(statement)) {
      // A file's own exports (an app's `export default function Page`): the statement goes in
      // the nested scope, where `export` cannot stand, so the keywords are blanked.
      for (const m of modifiers) {
        if (m.kind === ts.SyntaxKind.ExportKeyword || m.kind === ts.SyntaxKind.DefaultKeyword) {
          blankKeyword(m);
        }
      }
      continue;
    }
    imports.push(statement.getText(file));
    const clause = statement.importClause;
    if (clause?.name) names.add(clause.name.text);
    const bindings = clause?.namedBindings;
    if (bindings && ts.isNamedImports(bindings)) {
      for (const el of bindings.elements) names.add(el.name.text);
    } else if (bindings) {
      names.add(bindings.name.text);
    }
    blank(statement);
  }
  return { imports, declarations, body: lines.join('\n'), bodyLines: lines, names };
}

/** An import declaration without the names in `drop`; undefined when nothing is left. */
function withoutNames(decl: string, drop: Set<string>): string | undefined {
  const file = ts.createSourceFile('x.ts', decl, ts.ScriptTarget.Latest, true);
  const statement = file.statements[0] as ts.ImportDeclaration;
  const clause = statement.importClause;
  const from = statement.moduleSpecifier.getText(file);
  if (clause === undefined) return decl;
  const bindings = clause.namedBindings;
  if (bindings === undefined || !ts.isNamedImports(bindings)) {
    return clause.name && drop.has(clause.name.text) ? undefined : decl;
  }
  const kept = bindings.elements
    .filter((el) => !drop.has(el.name.text))
    .map((el) => el.getText(file));
  if (kept.length === 0) return undefined;
  const typeOnly = clause.isTypeOnly ? 'type ' : '';
  return `import ${typeOnly}{ ${kept.join(', ')} } from ${from};`;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slugOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Whether a `declare` statement declares `name`. */
function declares(statement: string, name: string): boolean {
  return new RegExp(
    `\\b(?:const|let|var|function|class|interface|type|namespace)\\s+${name}\\b`,
  ).test(statement);
}
