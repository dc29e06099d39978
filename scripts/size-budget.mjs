// The bundle size budget (issue #15; packages/core/README.md, "Bundle size"). Bundles the four
// apps the READMEs tell a user to write, as built from the packages' dist, and fails when one
// is over its budget:
//
//   A  @keel/core with the spec's defaults (intelligence, circuit breaker), one get
//   B  the same without intelligence and the circuit breaker
//   C  every feature: createClient with scheduler and adaptive options
//   D  React: core defaults + ClientProvider + useQuery + useMutation + useServerEvents
//
// Each app is the README code block whose info string says `size=<id>` (```ts size=A), read from
// the README at run time: there is no copy to drift from what users are told to write.
//
// Usage: node scripts/size-budget.mjs   (after `pnpm build`; `pnpm size`, run by `test:pkg`)
//        node scripts/size-budget.mjs --modules B   (no build needed: app B bundled from the
//        sources, minified bytes per input module, largest first: where to look when shrinking)
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const KB = 1024;

/**
 * `target`: the size issue #15 asks for. `budget`: the most the check lets through today, a
 * ratchet about 1% above the size measured when it was last set (room for a small fix, not for
 * a feature): lower it as the code shrinks, and never raise it to let a change through without
 * saying why in the commit.
 */
export const APPS = [
  {
    id: 'A',
    readme: 'packages/core/README.md',
    what: 'core defaults, one get',
    target: 10 * KB,
    // core-size28: 18,413 -> 18,306 B (cache watchers out of the client's store, one catch site
    // in request(), fewer wrappers).
    // +0.2 KB (core-intel28): intelligence ages its latency samples after a quiet spell (the
    // adaptive engine's rule, internal/pace.ts, and the client's clock to tell it: +167 B), and
    // the cancel event's internal flight tracker (+4 B): 18,407 -> 18,578 B; 18.2 KB is 18,636 B,
    // 0.3% above. Merged with core-size28: 18,469 B; 18.1 KB (18,534 B) leaves 65 B.
    // core-resolve28: about -20 to -37 B (emitAhead, removeAll, subscriberCount off the base path).
    // Merged with core-spec28/core-chaos28: 18,484 B. core-size28b: 18,424 B (smaller forms of the
    // day's fixes and a few helpers); 18.0 KB (18,432 B) would leave 8 B, so 18.1 KB stays.
    // stop 29 (size passes over intelligence/circuit, client, request; B no longer bundles
    // CircuitOpenError): 18,192 B; 17.9 KB (18,330 B) is 0.8% above.
    // +0.2-0.6 KB (stop 31): header names sent as written (+~95 B), clearCache keeping the
    // requests of subscribed keys for invalidate (+~85 B), clock and cancel errors reported,
    // checked prefetch/matches/invalidate inputs; D also: disabled queries follow the cache
    // (core watchCache, +~300 B). size31 took back 18-26 B. 18,636 B; 18.3 KB leaves 103 B.
    // size33 (the cancel payload a plain object, Flight.key a field, parameter properties,
    // smaller forms): 18,636 -> 18,594 B; 18.3 KB (18,739 B) is 0.8% above (18.2 KB: 0.2%).
    // +0.3 KB (stop 37): an unknown option key is a RangeError listing the keys (every options
    // object names its keys; a misspelt one was dropped in silence): 18,694 -> 18,964 B;
    // 18.6 KB (19,046 B) is 0.4% above.
    // +0.15 KB (stop 37): text and JSON bodies from a fetch that ignores its signal read by
    // keel's own cancellable reader, not piped through a stream (the pipe made the per-request
    // scheduler bench 2.5x slower): 18,964 -> 19,118 B; 18.8 KB (19,251 B) is 0.7% above.
    // stop 38-39: the reader's fixes, then one reader for every text, JSON and counted body (the
    // pipe kept for streams only): 19,247 B, 4 B under; unchanged on purpose (the same form +110 B
    // at first, taken back by a smaller one).
    // +22 B (stop 41): a caching read joining a `cache: false` flight has the response written
    // for it (Flight.writer), and a relative cache key has its path (splitURL): 19,236 ->
    // 19,258 B, 7 B over 18.8 KB; 18.9 KB (19,354 B) is 0.5% above.
    // +0.1 KB (stop 41, later): a clock that throws as an error response is read fails the
    // request with its own error; a stream body a cancel left unhanded is cancelled; a subscribed
    // key evicted by maxEntries is refetched by invalidation: 19,284 -> 19,400 B; 19.0 KB
    // (19,456 B) is 0.3% above.
    // +0.1 KB (stop 42): the specs of evicted wanted keys bounded by maxEntries and forgotten when
    // no subscription wants them (a leak and a request flood), a body cut when the fetch read its
    // signal but did not tie the body to it, a request's `retry: true` over a client's `false`:
    // 19,408 -> 19,518 B; 19.1 KB (19,558 B) is 0.2% above.
    // +0.1 KB (stop 42, later): an invalidation cancels the detached reads no caller waits for (a
    // burst of 100 cost 100 reads to the end), and `fresh` is one rule (isFreshAt) for the
    // client, the store and the inspector: 19,578 B; 19.2 KB (19,661 B) is 0.4% above.
    budget: 19.2 * KB,
  },
  {
    id: 'B',
    readme: 'packages/core/README.md',
    what: 'A without intelligence, circuit breaker',
    target: 6 * KB,
    // core-size28: 15,335 -> 15,244 B. core-intel28: +9 B (the cancel event's internal flight
    // tracker, so the adaptive observer's final cancel is O(1)): 15,253 B would leave 4 B under
    // 14.9 KB, so 15.0 KB.
    // core-resolve28: about -20 to -37 B (emitAhead, removeAll, subscriberCount off the base path).
    // Merged: 15,228 B, back under 14.9 KB with 29 B. +0.1 KB (core-chaos28): a signal whose
    // addEventListener throws no longer leaves a dead flight (the caller is attached before
    // circuit admission, +31 B) and a cancel listener's request no longer joins a cancelled
    // flight (+3 B): 15,254 B, 4 B under 14.9 KB.
    // core-size28b: 15,254 -> 15,202 B (smaller forms of the day's fixes, checkGcTime into
    // checkMs, no explicit undefined arguments): back to 14.9 KB (15,257 B), 55 B above.
    // +0.2-0.6 KB (stop 31): header names sent as written (+~95 B), clearCache keeping the
    // requests of subscribed keys for invalidate (+~85 B), clock and cancel errors reported,
    // checked prefetch/matches/invalidate inputs; D also: disabled queries follow the cache
    // (core watchCache, +~300 B). size31 took back 18-26 B. 15,577 B; 15.3 KB leaves 90 B.
    // size33: 15,577 -> 15,541 B; 15.3 KB (15,667 B) is 0.8% above, 15.2 KB would be under.
    // +0.3 KB (stop 37): unknown option keys refused (the client's, a request's, cache, retry,
    // scheduler group, invalidate): 15,623 -> 15,870 B; 15.6 KB (15,974 B) is 0.7% above.
    // +0.15 KB (stop 37): the own body reader (see A): 16,027 B; 15.7 KB (16,077 B) leaves 50 B,
    // so 15.8 KB (0.9% above).
    // +15 B (stop 41): a caching read that joins a `cache: false` flight has the response
    // written for it (Flight.writer), a relative cache key its path: 16,177 -> 16,192 B, 13 B
    // over 15.8 KB; 15.9 KB (16,282 B) is 0.6% above.
    // +0.1 KB (stop 41, later): the core fixes of A: 16,192 -> 16,303 B; 16.0 KB (16,384 B) is
    // 0.5% above.
    // +0.1 KB (stop 42): the core fixes of A: 16,315 -> 16,426 B; 16.1 KB (16,486 B) is 0.4% above.
    // +0.1 KB (stop 42, later): the later fixes of A: 16,486 B, 0.4 B under 16.1 KB; 16.2 KB
    // (16,589 B) is 0.6% above.
    budget: 16.2 * KB,
  },
  {
    id: 'C',
    readme: 'packages/core/README.md',
    what: 'every feature (createClient)',
    target: 17 * KB,
    // +0.1 KB (core-sched-adv): cancelling or re-queueing 100,000 jobs is no longer O(n^2)
    // (a linked list of a key's adaptive flights, skipped cancelled parked jobs, an insert hint
    // per lane queue: +85 B).
    // +0.1 KB (core-leads28): adaptive samples age after a quiet spell, so a window after an
    // idle hour is not judged on hour-old latencies (+68 B: 26,818 -> 26,886 B; 26.3 KB is
    // 26,931 B, 0.2% above, under the ~1% headroom).
    // core-size28: -97 B. react-leads28: +4 B (the flight slot no longer holds a request).
    // Merged: 26,798 B; 26.2 KB (26,829 B) leaves 31 B.
    // +0.1 KB (core-intel28): intelligence's sample aging (+114 B; the adaptive engine now
    // shares its code) and the observer's O(1) final cancel (-15 B): 26,886 -> 26,985 B; 26.4 KB
    // is 27,033 B, 0.2% above. Merged with core-size28: 26,879 B; 26.3 KB leaves 52 B.
    // core-resolve28: about -20 to -37 B (emitAhead, removeAll, subscriberCount off the base path).
    // core-size28b: 26,874 -> 26,800 B; 26.2 KB (26,828 B) leaves 28 B.
    // stop 29: 26,634 B; 26.1 KB (26,726 B) is 0.3% above.
    // +0.2-0.6 KB (stop 31): header names sent as written (+~95 B), clearCache keeping the
    // requests of subscribed keys for invalidate (+~85 B), clock and cancel errors reported,
    // checked prefetch/matches/invalidate inputs; D also: disabled queries follow the cache
    // (core watchCache, +~300 B). size31 took back 18-26 B. 27,126 B; 26.5 KB leaves 10 B.
    // +0.1 KB (stop 33): react33's onSuccess-invalidate-refetches-once mark in the core
    // (afterWrite, +~32 B) and decideRetry's defaults: 27,158 B; 26.6 KB leaves 80 B.
    // +0.4 KB (stop 37): unknown option keys refused, the features' blocks too: 27,155 ->
    // 27,491 B; 26.9 KB (27,546 B) leaves 55 B, so 27.0 KB (0.6% above).
    // +0.15 KB (stop 37): the own body reader (see A): 27,639 B; 27.2 KB (27,853 B) is 0.8% above.
    // +0.1 KB (stop 41, later): the core fixes of A: 27,814 -> 27,925 B; 27.4 KB (28,058 B) is
    // 0.5% above.
    // +0.1 KB (stop 42): the core fixes of A: 27,937 -> 28,043 B, 14 B under 27.4 KB; 27.5 KB
    // (28,160 B) is 0.4% above.
    budget: 27.5 * KB,
  },
  {
    id: 'D',
    readme: 'packages/react/README.md',
    what: 'React: defaults + hooks + useServerEvents',
    target: 12 * KB,
    // +0.1 KB (react-adv3): the server-events length cap (maxEventLength, +111 B) and reconnect
    // on 'online' (+36 B). react-size: 26,753 -> 26,693 B; 26.2 KB (26,829 B) is 0.5% above
    // that, already under the ~1% headroom, so it stays (26.1 KB would leave 33 B).
    // core-size28: 26,747 -> 26,665 B.
    // +0.1 KB (core-intel28): intelligence's sample aging (+150 B) and the cancel event's
    // internal flight tracker (+6 B): 26,746 -> 26,902 B; 26.3 KB is 26,931 B, 0.1% above.
    // core-resolve28: about -20 to -37 B (emitAhead, removeAll, subscriberCount off the base path).
    // core-size28b: 26,898 -> 26,829 B; 26.2 KB (26,828 B) would be 1 B over, so 26.3 KB stays.
    // stop 29 (the core passes and react's error-boundary release out of the store): 26,637 B;
    // 26.1 KB (26,726 B) is 0.3% above.
    // +0.2-0.6 KB (stop 31): header names sent as written (+~95 B), clearCache keeping the
    // requests of subscribed keys for invalidate (+~85 B), clock and cancel errors reported,
    // checked prefetch/matches/invalidate inputs; D also: disabled queries follow the cache
    // (core watchCache, +~300 B). size31 took back 18-26 B. 27,622 B; 27.0 KB leaves 26 B.
    // +0.3 KB (stop 33, react33): a mutation's onSuccess invalidate refetches once (core
    // afterWrite + mutation observer, ~+130 B gzip), a suspense select that threw is retried
    // after a reset (~+70 B), a clean stream close reported while reconnecting (~+20 B):
    // 27,849 B; 27.3 KB leaves 106 B.
    // +0.3 KB (stop 37): the core's unknown option keys refused: 27,803 -> 28,094 B; 27.5 KB
    // (28,160 B) leaves 66 B, so 27.6 KB (0.6% above).
    // +0.15 KB (stop 37): the own body reader (see A): 28,258 B; 27.8 KB (28,467 B) is 0.7% above.
    // +0.15 KB (stop 41, later): the core fixes below (A), and keepPreviousData's placeholder
    // taken from the committed render only: 28,449 -> 28,603 B; 28.1 KB (28,774 B) is 0.6% above.
    // +0.1 KB (stop 42): the core fixes of A, useSuspenseQuery dropping a definition's enabled
    // and placeholderData, a mutation's thrown value kept as thrown, maxEventLength checked per
    // line: 28,616 -> 28,783 B; 28.2 KB (28,877 B) is 0.3% above.
    budget: 28.2 * KB,
  },
];

/** The code of the one block of `readme` tagged `size=<id>`; throws unless there is exactly one. */
export function appCode(readme, id) {
  const text = readFileSync(join(ROOT, readme), 'utf8');
  const fence = new RegExp(
    `^(\`{3,})(?:ts|tsx)\\b[^\\n]*\\bsize=${id}\\b[^\\n]*\\n([\\s\\S]*?)^\\1`,
    'gm',
  );
  const found = [...text.matchAll(fence)];
  if (found.length !== 1) {
    throw new Error(`${readme}: expected one code block tagged size=${id}, found ${found.length}`);
  }
  return found[0][2];
}

/** Where each package entry is: the built dist (what users install), never the sources. */
const DIST = {
  '@keel/core': 'packages/core/dist/index.js',
  '@keel/core/internals': 'packages/core/dist/internals.js',
  '@keel/react': 'packages/react/dist/index.js',
};

/** The same entries in the sources (module by module: the tree-shaking test reads them). */
const SOURCES = {
  '@keel/core': 'packages/core/src/index.ts',
  '@keel/core/internals': 'packages/core/src/internals.ts',
  '@keel/react': 'packages/react/src/index.ts',
};

/** An esbuild plugin resolving `@keel/*` imports through `entries` (DIST or SOURCES). */
function keelPlugin(entries) {
  return {
    name: 'keel',
    setup(b) {
      b.onResolve({ filter: /^@keel\// }, (args) => {
        const file = entries[args.path];
        if (file === undefined) return { errors: [{ text: `no entry for ${args.path}` }] };
        return { path: join(ROOT, file) };
      });
    },
  };
}

/** esbuild plugin: `@keel/*` imports resolve to the packages' built dist. */
export const keelDist = keelPlugin(DIST);

/** esbuild plugin: `@keel/*` imports resolve to the packages' sources. */
export const keelSources = keelPlugin(SOURCES);

/**
 * Minified and gzip -9 bytes of `code` bundled as an app: esbuild --bundle --minify
 * --format=esm --target=es2022 for the browser, react and react-dom external, production React.
 * `resolveDir` is where bare imports other than @keel/* resolve from. `modules`: the input files
 * that put bytes in the output, by path; `bytesByModule`: the minified bytes each puts there.
 */
export async function bundleSize(code, { resolveDir = ROOT, loader = 'tsx', plugins = [] } = {}) {
  const result = await build({
    stdin: { contents: code, resolveDir, loader, sourcefile: 'app.tsx' },
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    jsx: 'automatic',
    external: ['react', 'react-dom'],
    define: { 'process.env.NODE_ENV': '"production"' },
    write: false,
    metafile: true,
    logLevel: 'silent',
    plugins,
  });
  const bytes = result.outputFiles[0].contents;
  const [output] = Object.values(result.metafile.outputs);
  const inputs = Object.entries(output.inputs).filter(([, input]) => input.bytesInOutput > 0);
  const modules = inputs.map(([path]) => path);
  const bytesByModule = new Map(inputs.map(([path, input]) => [path, input.bytesInOutput]));
  return { min: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length, modules, bytesByModule };
}

/** The four apps measured: `{ ...app, min, gzip }`. */
export async function measureApps() {
  const out = [];
  for (const app of APPS) {
    const size = await bundleSize(appCode(app.readme, app.id), { plugins: [keelDist] });
    out.push({ ...app, ...size });
  }
  return out;
}

export const kb = (bytes) => `${(bytes / KB).toFixed(1)} KB`;

async function main() {
  const apps = await measureApps();
  const rows = apps.map((a) => [
    a.id,
    a.what,
    kb(a.min),
    kb(a.gzip),
    kb(a.budget),
    a.gzip > a.budget ? 'OVER' : 'ok',
    kb(a.target),
    a.gzip <= a.target ? 'met' : `missed (${(a.gzip / a.target).toFixed(2)}x)`,
  ]);
  const head = ['app', 'what', 'min', 'gzip -9', 'budget', '', 'target', ''];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  for (const r of [head, ...rows]) console.log(r.map((c, i) => c.padEnd(widths[i])).join('  '));
  const over = apps.filter((a) => a.gzip > a.budget);
  if (over.length > 0) {
    console.error(
      `size budget exceeded: ${over.map((a) => `${a.id} ${kb(a.gzip)} > ${kb(a.budget)}`).join(', ')}`,
    );
    process.exit(1);
  }
}

/** `--modules <id>`: app `<id>` from the sources, minified bytes by module, largest first. */
async function printModules(id) {
  const app = APPS.find((a) => a.id === id);
  if (app === undefined) throw new Error(`--modules: no app ${id} (${APPS.map((a) => a.id)})`);
  const size = await bundleSize(appCode(app.readme, app.id), { plugins: [keelSources] });
  const rows = [...size.bytesByModule].sort((a, b) => b[1] - a[1]);
  for (const [path, bytes] of rows) console.log(String(bytes).padStart(7), path);
  console.log(`${app.id}: ${size.min} B minified, ${kb(size.gzip)} gzip -9 (from the sources)`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--modules');
  await (at === -1 ? main() : printModules(process.argv[at + 1]));
}
