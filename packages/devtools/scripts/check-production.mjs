// check:pkg: the built package, bundled into an app's production build (esbuild, minified,
// NODE_ENV=production), leaves the panel out when the app imports `@keel/devtools`;
// `@keel/devtools/production` keeps it. (Bundlers resolve `import` to the ESM build, the one
// they can tree-shake.)
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// A string only the panel holds: its stylesheet's toggle rule.
const PANEL = 'kdt-toggle';

async function bundle(file) {
  const path = JSON.stringify(join(root, 'dist', file));
  const contents = `import { KeelDevtools } from ${path};\nexport const app = KeelDevtools;\n`;
  const result = await build({
    stdin: { contents, resolveDir: root, loader: 'js' },
    bundle: true,
    minify: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    define: { 'process.env.NODE_ENV': '"production"' },
    external: ['react', 'react/*', '@keel/core', '@keel/react'],
    logLevel: 'silent',
  });
  return result.outputFiles[0].text;
}

const failures = [];
const esm = await bundle('index.js');
if (esm.includes(PANEL)) failures.push('dist/index.js keeps the panel in a production bundle');
const prod = await bundle('production.js');
if (!prod.includes(PANEL)) failures.push('dist/production.js lost the panel');
if (failures.length > 0) {
  for (const failure of failures) console.error(`check-production: ${failure}`);
  process.exit(1);
}
console.log(
  `check-production: a production bundle importing @keel/devtools holds ${esm.length} bytes of it (no panel); /production holds ${prod.length}`,
);
