// Part of `check:pkg`, after the build: the published types expose no internals. Fails when a
// class in dist/*.d.ts has a member whose name starts with `_`, a writable property that is not
// public API (the allowlist below), a public constructor (ctx and streams are made by the app),
// or when any declaration still says `@internal`.
// Usage: node scripts/check-dts.mjs (from packages/server)
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/** Writable properties that are public API: `ctx.body` (middleware may replace it), and `name`. */
const WRITABLE = new Set(['Context.body', '*.name']);
/** Classes users construct themselves. */
const CONSTRUCTIBLE = new Set([
  'HttpException',
  'BadRequestError',
  // Thrown by a handler that reads ctx.req itself.
  'BodyTooLargeError',
  'HubPublishError',
  'ReleasedContextError',
  // Raised by the Redis store; an app's tests build one to check how they handle hub.ready failing.
  'RedisStoreError',
]);

const dist = new URL('../dist/', import.meta.url);
const problems = [];
const files = readdirSync(dist).filter((f) => f.endsWith('.d.ts') || f.endsWith('.d.cts'));
if (files.length === 0) problems.push('no .d.ts in dist/: build first');
for (const file of files) {
  const text = readFileSync(join(dist.pathname, file), 'utf8');
  if (text.includes('@internal')) problems.push(`${file}: mentions @internal`);
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  source.forEachChild(function visit(node) {
    if (ts.isClassDeclaration(node) && node.name) {
      const cls = node.name.text;
      for (const member of node.members) {
        const isPrivate = member.modifiers?.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword);
        if (ts.isConstructorDeclaration(member)) {
          if (!isPrivate && !CONSTRUCTIBLE.has(cls)) {
            problems.push(`${file}: ${cls} has a public constructor`);
          }
          continue;
        }
        const name = member.name?.getText(source) ?? '';
        if (name.startsWith('_')) problems.push(`${file}: ${cls}.${name} is an internal member`);
        if (ts.isPropertyDeclaration(member) && !isPrivate && !name.startsWith('#')) {
          const readonly = member.modifiers?.some((m) => m.kind === ts.SyntaxKind.ReadonlyKeyword);
          if (!readonly && !WRITABLE.has(`${cls}.${name}`) && !WRITABLE.has(`*.${name}`)) {
            problems.push(`${file}: ${cls}.${name} is writable`);
          }
        }
      }
    }
    node.forEachChild(visit);
  });
}
if (problems.length > 0) {
  console.error(`check-dts: ${problems.length} problem(s)\n${problems.join('\n')}`);
  process.exit(1);
}
console.log(`check-dts: ${files.length} declaration files, no internals exposed`);
