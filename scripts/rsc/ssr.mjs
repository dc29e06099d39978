// The server-rendering side (no react-server condition): reads the RSC payload from stdin, as a
// framework's SSR pass does, and renders it to HTML with react-dom/server. Prints
// `{ html, fetched }` as JSON.

import { text } from 'node:stream/consumers';
import { prerenderToNodeStream } from 'react-dom/static';
import { createFromNodeStream } from 'react-server-dom-webpack/client';

// The client modules the payload may reference, loaded as the browser bundle would hold them.
const modules = {};
for (const id of [
  import.meta.resolve('@keel/react'),
  import.meta.resolve('@keel/devtools'),
  import.meta.resolve('./providers.mjs'),
  import.meta.resolve('./todos.mjs'),
]) {
  modules[id] = await import(id);
}
globalThis.__webpack_require__ = (id) => {
  const found = modules[id];
  if (found === undefined) throw new Error(`the payload references an unknown module ${id}`);
  return found;
};
globalThis.__webpack_chunk_load__ = () => Promise.resolve();

const moduleMap = new Proxy({}, { get: (_, id) => ({ '*': { id, chunks: [] } }) });
const root = createFromNodeStream(process.stdin, {
  moduleMap,
  serverModuleMap: null,
  moduleLoading: null,
});
const { prelude } = await prerenderToNodeStream(await root);
const html = await text(prelude);
const { fetched } = modules[import.meta.resolve('./providers.mjs')];
process.stdout.write(JSON.stringify({ html, fetched }));
