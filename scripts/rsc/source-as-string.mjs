// Module loader hooks (see register.mjs) that stand in for what an RSC bundler does around
// React's loader:
// - an ES module's source as a string, without its `//# sourceMappingURL` comment (React's loader
//   would fetch the map by the comment's relative path, which Node refuses: it wants a URL);
// - the `react-server-dom-webpack/server` import React's loader writes into a client module
//   resolved from this harness (where the app installed it), not from that module's package.
const MAP_COMMENT = /^\/\/[#@] sourceMappingURL=.*$/gm;

export async function resolve(specifier, context, nextResolve) {
  if (specifier.startsWith('react-server-dom-webpack/')) {
    return nextResolve(specifier, { ...context, parentURL: import.meta.url });
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  if (result.format !== 'module' || result.source == null) return result;
  const source =
    typeof result.source === 'string' ? result.source : Buffer.from(result.source).toString('utf8');
  return { ...result, source: source.replace(MAP_COMMENT, '') };
}
