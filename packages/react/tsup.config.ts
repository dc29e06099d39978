import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { packageConfig } from '../../tsup.shared';

/** Served from the client entry, not referenced: what a Server Component calls itself. */
const SERVER_CALLABLE = ['dehydrate', 'hydrate'];

/**
 * `dist/react-server.js`, the entry a Server Components bundler resolves (the `react-server`
 * condition): every export of the client entry by name (client references there, so a Server
 * Component renders `<HydrationBoundary>` and `<ClientProvider>`), but `dehydrate` and `hydrate`
 * from @keel/core, plain functions a Server Component calls. Names, not `export *`: a bundler
 * knows a client module's exports only by name.
 */
async function writeServerEntry(): Promise<void> {
  const client = (await import(pathToFileURL('dist/index.js').href)) as Record<string, unknown>;
  const names = Object.keys(client).filter((name) => !SERVER_CALLABLE.includes(name));
  writeFileSync(
    'dist/react-server.js',
    [
      '// The @keel/react entry of React Server Components (the `react-server` condition): the',
      "// components and hooks are the client entry's (client references); dehydrate and hydrate",
      '// are the plain functions of @keel/core, for a Server Component to call.',
      `export { ${names.join(', ')} } from './index.js';`,
      `export { ${SERVER_CALLABLE.join(', ')} } from '@keel/core';`,
      '',
    ].join('\n'),
  );
}

export default packageConfig(
  { index: 'src/index.ts' },
  { client: true, afterBuild: writeServerEntry },
);
