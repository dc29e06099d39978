import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));
/** The public option types that are not named `...Options`. */
const ALSO = new Set(['ServerTimeouts', 'BodyParsers', 'Rule', 'InjectRequest']);

/** Every exported option interface of the server: name -> its fields and their JSDoc text. */
function optionTypes(): Map<string, { field: string; optional: boolean; doc: string }[]> {
  const out = new Map<string, { field: string; optional: boolean; doc: string }[]>();
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter(
    (f) => f.endsWith('.ts') && !f.endsWith('.test.ts'),
  );
  for (const file of files) {
    const text = readFileSync(join(SRC, file), 'utf8');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
    for (const node of source.statements) {
      if (!ts.isInterfaceDeclaration(node)) continue;
      const name = node.name.text;
      const exported = node.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
      if (!exported || !(name.endsWith('Options') || ALSO.has(name))) continue;
      out.set(
        name,
        node.members.filter(ts.isPropertySignature).map((member) => ({
          field: member.name.getText(source),
          optional: member.questionToken !== undefined,
          doc: ts
            .getJSDocCommentsAndTags(member)
            .map((d) => d.getText(source))
            .join('\n'),
        })),
      );
    }
  }
  return out;
}

describe('option docs: an editor hover is the manual', () => {
  const types = optionTypes();

  it('finds the public option types', () => {
    for (const name of [
      'AppOptions',
      'ServerTimeouts',
      'CloseOptions',
      'RouteOptions',
      'BodyParsers',
      'SseOptions',
      'GraphqlOptions',
      'CompressionOptions',
      'CorsOptions',
      'CacheControlOptions',
      'CookieOptions',
      'SendFileOptions',
      'EventHubOptions',
      'ConnectOptions',
      'PublishOptions',
      'InvalidateOptions',
      'MemoryStoreOptions',
      'RedisStreamsOptions',
      'HttpExceptionOptions',
      'BadRequestErrorOptions',
      'Rule',
      'InjectRequest',
    ]) {
      expect(types.has(name), name).toBe(true);
    }
  });

  it('every optional field has a JSDoc sentence and a @default', () => {
    const missing: string[] = [];
    for (const [name, fields] of types) {
      for (const { field, optional, doc } of fields) {
        if (!optional) continue;
        const text = doc.replace(/^\/\*\*|\*\/$/g, '').replace(/^\s*\*/gm, '');
        const sentence = text.split('@default')[0]!.trim();
        if (sentence.length < 10 || !/@default\s+\S/.test(text)) missing.push(`${name}.${field}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
