// Part of `test:pkg`, after the build: the packages as an application that installed them uses
// them (resolved by name through their `exports` maps, from readme/, which depends on them):
//
//   files    a package publishes its README and CHANGELOG (the READMEs send readers there)
//   cjs      every subpath loads with require() and with import(), with the same export names
//   guards   an error made by one build (ESM or CommonJS) passes the other build's guard: an app
//            that has both (the dual-package hazard) can narrow with the guards, not `instanceof`
//   hydrate  <HydrationBoundary> renders dehydrated data under require() and under import(): the
//            CommonJS entries of a package must share its modules (one client registry)
//   types    every README code block compiles against the published declarations (not the
//            sources, as readme/compile.test.ts does), tsc --strict with skipLibCheck off, as an
//            ESM package (nodenext) and as a CommonJS one (node16); the declarations compile
//            under the strictest flags (exactOptionalPropertyTypes, ...), and those of the
//            browser packages without @types/node; an app under exactOptionalPropertyTypes
//            passes `undefined` to optional option fields (scripts/exact-optional.consumer.tsx)
//   browser  @keel/core and @keel/react bundled for the browser (esbuild, platform browser) pull
//            in no Node module and use no Node global (process, Buffer, global, require, ...)
//   rsc      React Server Components (Next.js App Router): a Server Component imports
//            `dehydrate` and `<HydrationBoundary>` from '@keel/react' and `<KeelDevtools>` from
//            '@keel/devtools' and prefetches with @keel/core; its payload (react-server-dom-webpack,
//            React's own loader standing in for the bundler: scripts/rsc/) renders to HTML that
//            shows the data, with no request
//
// Usage: node scripts/check-consumers.mjs   (after `pnpm build`; `pnpm test:pkg` runs it)
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { tsImport } from 'tsx/esm/api';
import ts from 'typescript';
import { ROOT } from './size-budget.mjs';

/** Resolves as an app does: from a folder whose package.json depends on the packages. */
const require = createRequire(join(ROOT, 'readme', 'package.json'));
// import() resolves from the module that calls it: one placed in that folder (ignored by git).
const GENERATED = join(ROOT, 'readme', '.generated', 'consumers');
mkdirSync(GENERATED, { recursive: true });
writeFileSync(join(GENERATED, 'load.mjs'), 'export const load = (id) => import(id);\n');
const { load } = await import(pathToFileURL(join(GENERATED, 'load.mjs')).href);
const PACKAGES = ['@keel/core', '@keel/react', '@keel/server', '@keel/devtools'];
/** The entries an app runs in a browser. */
const BROWSER = ['@keel/core', '@keel/react', '@keel/devtools', '@keel/devtools/production'];

const failures = [];
const check = async (what, fn) => {
  try {
    await fn();
  } catch (err) {
    failures.push(`${what}: ${err instanceof Error ? err.message : String(err)}`);
  }
};
const expect = (ok, message) => {
  if (!ok) throw new Error(message);
};

/** The subpaths of a package's `exports` that are code (not `./package.json`). */
function subpaths(name) {
  const { exports } = require(`${name}/package.json`);
  return Object.keys(exports)
    .filter((key) => key !== './package.json')
    .map((key) => (key === '.' ? name : `${name}/${key.slice(2)}`));
}

for (const id of PACKAGES) {
  await check(`files ${id}`, () => {
    const { files } = require(`${id}/package.json`);
    const missing = ['README.md', 'CHANGELOG.md'].filter((f) => !files.includes(f));
    expect(missing.length === 0, `package.json "files" leaves out ${missing.join(', ')}`);
  });
}

for (const id of PACKAGES.flatMap(subpaths)) {
  await check(`cjs ${id}`, async () => {
    const cjs = Object.keys(require(id)).sort();
    const esm = Object.keys(await load(id))
      .filter((k) => k !== 'default' && k !== 'module.exports')
      .sort();
    expect(
      cjs.join() === esm.join(),
      `require() and import() export different names: ${cjs.filter((k) => !esm.includes(k))} / ${esm.filter((k) => !cjs.includes(k))}`,
    );
  });
}

/** How each package's errors are made, for the guard check: [class, guard, constructor args]. */
const ERRORS = {
  '@keel/core': [
    ['HttpError', 'isHttpError', [{ method: 'GET', url: '/x' }, { status: 500 }]],
    ['NetworkError', 'isNetworkError', [{ method: 'GET', url: '/x' }, {}]],
    ['TimeoutError', 'isTimeoutError', []],
    ['CancelledError', 'isCancelledError', []],
    ['CircuitOpenError', 'isCircuitOpenError', []],
    [
      'ParseError',
      'isParseError',
      [
        { method: 'GET', url: '/x' },
        { status: 200, body: '{' },
      ],
    ],
    ['CancelledError', 'isKeelError', []],
  ],
  '@keel/react': [['NoServerDataError', 'isNoServerDataError', ['GET /x']]],
  '@keel/server': [
    ['HttpException', 'isHttpException', [404, 'No such user']],
    ['BadRequestError', 'isBadRequestError', ['bad']],
  ],
};
for (const [id, errors] of Object.entries(ERRORS)) {
  await check(`guards ${id}`, async () => {
    const cjs = require(id);
    const esm = await load(id);
    for (const [cls, guard, args] of errors) {
      const fromEsm = new esm[cls](...args);
      const fromCjs = new cjs[cls](...args);
      expect(cjs[guard](fromEsm), `${guard} (require) refuses a ${cls} made by import()`);
      expect(esm[guard](fromCjs), `${guard} (import) refuses a ${cls} made by require()`);
      expect(!cjs[guard]({ name: cls }), `${guard} accepts a look-alike object`);
    }
  });
}

/**
 * Server rendering with hydration through one build: a client fills its cache from a fetch
 * that answers at once, `dehydrate` hands it over, and `<HydrationBoundary>` gives it to a second
 * client whose `useQuery` must render the data on the server.
 */
async function hydrates(core, react, { createElement: h }, { renderToString }) {
  const answer = () =>
    new Response(JSON.stringify([{ id: 1, title: 'hydrated todo' }]), {
      headers: { 'content-type': 'application/json' },
    });
  const server = core.createClient({
    baseURL: 'https://api.example.com',
    fetch: async () => answer(),
  });
  await server.get('/todos');
  const state = react.dehydrate(server);
  const browser = core.createClient({
    baseURL: 'https://api.example.com',
    fetch: () => new Promise(() => {}),
  });
  const Todos = () => {
    const { data } = react.useQuery('/todos');
    return h('p', null, data?.[0]?.title ?? 'no data');
  };
  const tree = h(
    react.ClientProvider,
    { client: browser },
    h(react.HydrationBoundary, { state }, h(Todos)),
  );
  const html = renderToString(tree);
  expect(html.includes('hydrated todo'), `rendered ${JSON.stringify(html)}`);
}

await check('hydrate (require)', () =>
  hydrates(
    require('@keel/core'),
    require('@keel/react'),
    require('react'),
    require('react-dom/server'),
  ),
);
await check('hydrate (import)', async () =>
  hydrates(
    await load('@keel/core'),
    await load('@keel/react'),
    await load('react'),
    await load('react-dom/server'),
  ),
);

/** Writes `files` into a fresh folder under GENERATED with `type`; the tsc diagnostics. */
function compile(folder, type, files, options) {
  const dir = join(GENERATED, folder);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type }));
  const names = Object.entries(files).map(([name, source]) => {
    writeFileSync(join(dir, name), source);
    return join(dir, name);
  });
  const program = ts.createProgram(names, {
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    strict: true,
    noUncheckedIndexedAccess: true,
    skipLibCheck: false,
    noEmit: true,
    jsx: ts.JsxEmit.ReactJSX,
    typeRoots: [join(ROOT, 'node_modules/@types')],
    ...options,
  });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, ' ');
    const at = d.file
      ? `${d.file.fileName.replace(`${ROOT}/`, '')}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}`
      : '';
    return { code: d.code, text: `${at} TS${d.code} ${message}` };
  });
}

const { blocksOf, isCode, moduleOf, READMES } = await tsImport(
  '../readme/blocks.ts',
  import.meta.url,
);
const modules = Object.fromEntries(
  READMES.flatMap((readme) => {
    const blocks = blocksOf(readme);
    const context = blocks.find((b) => b.context);
    return blocks.filter(isCode).map((block, i) => moduleOf(block, context, i));
  }).map((m) => [m.name, m.source]),
);
const MODES = [
  ['esm', 'module', ts.ModuleKind.NodeNext, ts.ModuleResolutionKind.NodeNext],
  ['cjs', 'commonjs', ts.ModuleKind.Node16, ts.ModuleResolutionKind.Node16],
];
for (const [folder, type, module, moduleResolution] of MODES) {
  await check(`types (${type}, ${folder === 'esm' ? 'nodenext' : 'node16'})`, () => {
    const problems = compile(folder, type, modules, { module, moduleResolution, types: ['node'] })
      // Top-level await: the READMEs write ES modules; a CommonJS app awaits in a function.
      .filter((d) => !(type === 'commonjs' && d.code === 1309));
    expect(problems.length === 0, `\n  ${problems.map((p) => p.text).join('\n  ')}`);
  });
}
/** The flags of the strictest app tsconfigs: the declarations must compile under them too. */
const STRICTEST = {
  exactOptionalPropertyTypes: true,
  noImplicitOverride: true,
  noPropertyAccessFromIndexSignature: true,
};
/** A module importing every export of `ids`. */
const importing = (ids) =>
  ids.map((id, i) => `import * as m${i} from '${id}';\nexport { m${i} };`).join('\n');
const DECLARATIONS = [
  ['declarations', 'every subpath, strictest flags', PACKAGES.flatMap(subpaths), ['node']],
  ['browser', 'browser entries, no @types/node', BROWSER, []],
];
for (const [folder, what, ids, types] of DECLARATIONS) {
  await check(`types (${what})`, () => {
    const problems = compile(
      folder,
      'module',
      { 'index.ts': importing(ids) },
      {
        module: ts.ModuleKind.ESNext,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        types,
        ...STRICTEST,
      },
    );
    expect(problems.length === 0, `\n  ${problems.map((p) => p.text).join('\n  ')}`);
  });
}

// Only `undefined` means "not set" (the READMEs): an app under exactOptionalPropertyTypes passes
// it to optional option fields explicitly (`url: process.env.REDIS_URL`), so they must take it.
await check('types (undefined options, exactOptionalPropertyTypes)', () => {
  const source = readFileSync(join(ROOT, 'scripts', 'exact-optional.consumer.tsx'), 'utf8');
  const problems = compile(
    'exact',
    'module',
    { 'index.tsx': source },
    {
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      types: ['node'],
      ...STRICTEST,
    },
  );
  expect(problems.length === 0, `\n  ${problems.map((p) => p.text).join('\n  ')}`);
});

/** Node's globals, as a free identifier (not a property, not inside a word). */
const NODE_GLOBAL =
  /(?<![\w$.])(process|Buffer|global|require|module|__dirname|__filename)(?![\w$])/g;
for (const id of ['@keel/core', '@keel/react']) {
  await check(`browser ${id}`, async () => {
    const result = await build({
      stdin: { contents: `export * from '${id}';`, resolveDir: join(ROOT, 'readme') },
      bundle: true,
      minify: true,
      format: 'esm',
      platform: 'browser',
      external: ['react', 'react/*'],
      write: false,
      logLevel: 'silent',
    });
    // Minified: comments are gone and locals renamed, so a Node name left is a global or a word
    // in a string; quoted strings are blanked first (templates stay: they may hold code).
    const code = result.outputFiles[0].text.replace(
      /"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'/g,
      '""',
    );
    const found = [...new Set([...code.matchAll(NODE_GLOBAL)].map((m) => m[1]))];
    expect(found.length === 0, `the browser bundle uses ${found.join(', ')}`);
  });
}

await check('rsc @keel/react', () => {
  // Copied beside the app's dependencies: the harness resolves react-server-dom-webpack and the
  // packages from there, as an app's code does.
  const dir = join(GENERATED, 'rsc');
  cpSync(join(ROOT, 'scripts', 'rsc'), dir, { recursive: true });
  const run = (args, input) => {
    try {
      return execFileSync(process.execPath, args, {
        cwd: dir,
        input,
        encoding: 'utf8',
        timeout: 60_000,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
    } catch (err) {
      throw new Error(
        `node ${args.join(' ')}: ${String(err.stderr ?? err)
          .trim()
          .slice(-2000)}`,
      );
    }
  };
  const payload = run(['--conditions=react-server', '--import', './register.mjs', 'server.mjs']);
  expect(
    /I\["\$\w+",\[\],"\$\w+"\]/.test(payload) && payload.includes('"HydrationBoundary"'),
    'HydrationBoundary is not a client reference in the RSC payload',
  );
  const { html, fetched } = JSON.parse(run(['ssr.mjs'], payload));
  expect(
    html.startsWith(
      '<ul data-status="success" data-fetching="false"><li>Write the docs</li><li>Ship &lt;keel&gt;</li></ul>',
    ),
    `the server-rendered page is ${html.slice(0, 300)}`,
  );
  expect(html.includes('<div class="kdt"'), 'the devtools panel was not rendered');
  expect(fetched.length === 0, `the hydrated page requested ${fetched.join(', ')}`);
});

if (failures.length > 0) {
  for (const failure of failures) console.error(`check-consumers: ${failure}`);
  process.exit(1);
}
console.log(
  'check-consumers: require() and import() load every subpath; guards work across builds; hydration renders under both; README blocks compile against the declarations; browser bundles use nothing of Node; a Server Component renders HydrationBoundary and the devtools',
);
