// Part of `test:pkg`, after the build: the packages as an application that installed them uses
// them (resolved by name through their `exports` maps, from readme/, which depends on them):
//
//   cjs      every subpath loads with require() and with import(), with the same export names
//   guards   an error made by one build (ESM or CommonJS) passes the other build's guard: an app
//            that has both (the dual-package hazard) can narrow with the guards, not `instanceof`
//   hydrate  <HydrationBoundary> renders dehydrated data under require() and under import(): the
//            CommonJS entries of a package must share its modules (one client registry)
//
// Usage: node scripts/check-consumers.mjs   (after `pnpm build`; `pnpm test:pkg` runs it)
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './size-budget.mjs';

/** Resolves as an app does: from a folder whose package.json depends on the packages. */
const require = createRequire(join(ROOT, 'readme', 'package.json'));
// import() resolves from the module that calls it: one placed in that folder (ignored by git).
const GENERATED = join(ROOT, 'readme', '.generated', 'consumers');
mkdirSync(GENERATED, { recursive: true });
writeFileSync(join(GENERATED, 'load.mjs'), 'export const load = (id) => import(id);\n');
const { load } = await import(pathToFileURL(join(GENERATED, 'load.mjs')).href);
const PACKAGES = ['@keel/core', '@keel/react', '@keel/server', '@keel/devtools'];

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

if (failures.length > 0) {
  for (const failure of failures) console.error(`check-consumers: ${failure}`);
  process.exit(1);
}
console.log(
  'check-consumers: require() and import() load every subpath; guards work across builds; hydration renders under both',
);
