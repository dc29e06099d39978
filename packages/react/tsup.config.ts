import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { packageConfig } from '../../tsup.shared';

/** Exports of a built module, by name. */
async function exportsOf(file: string): Promise<string[]> {
  return Object.keys((await import(pathToFileURL(file).href)) as Record<string, unknown>);
}

/**
 * `dist/react-server.js`, the entry a Server Components bundler resolves (the `react-server`
 * condition): the functions a Server Component calls itself (`dehydrate`, `hydrate`,
 * `queryOptions`, `keepPreviousData`) from `dist/server-callable.js`, which is no client module,
 * and every other export of the client entry by name (client references there, so a Server
 * Component renders `<HydrationBoundary>` and `<ClientProvider>`). Names, not `export *`: a
 * bundler knows a client module's exports only by name.
 */
async function writeServerEntry(): Promise<void> {
  const callable = await exportsOf('dist/server-callable.js');
  const names = (await exportsOf('dist/index.js')).filter((name) => !callable.includes(name));
  writeFileSync(
    'dist/react-server.js',
    [
      '// The @keel/react entry of React Server Components (the `react-server` condition): the',
      "// components and hooks are the client entry's (client references); the plain functions",
      '// (src/server-callable.ts) are for a Server Component to call.',
      `export { ${names.join(', ')} } from './index.js';`,
      `export { ${callable.join(', ')} } from './server-callable.js';`,
      '',
    ].join('\n'),
  );
}

export default packageConfig(
  { index: 'src/index.ts', 'server-callable': 'src/server-callable.ts' },
  { client: ['index'], afterBuild: writeServerEntry },
);
