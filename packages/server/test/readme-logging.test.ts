import { readFileSync } from 'node:fs';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { appStats } from '../src/app';
import { type App, cors } from '../src/index';
import { start, trackApps, until } from './helpers';

// The README's logging snippet ("### Middleware"), run as written: the README tells to register
// `cors()` first, and a preflight cors() answers never reaches a middleware after it.

const make = trackApps();
const README = new URL('../README.md', import.meta.url);

/** The first ts block after the "### Middleware" heading, as JavaScript. */
function middlewareSnippet(): string {
  const text = readFileSync(README, 'utf8');
  const section = text.slice(text.indexOf('\n### Middleware\n'));
  const block = /```ts\n([\s\S]*?)\n```/.exec(section)?.[1];
  if (block === undefined) throw new Error('no ts block under "### Middleware"');
  const js = ts.transpileModule(block, {
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
  }).outputText;
  // Its imports are what the test passes in.
  return js.replace(/^import .*$/gm, '');
}

describe('README: the logging snippet', () => {
  it('logs a duration for every request, a preflight cors() answered included', async () => {
    const code = middlewareSnippet();
    const app = make();
    // As the README's CORS section says, cors() goes first, unless the snippet places it itself.
    if (!code.includes('cors(')) app.use(cors({ origin: ['https://app.example'] }));
    const lines: unknown[][] = [];
    const log = { log: (...args: unknown[]) => lines.push(args) };
    new Function('app', 'cors', 'console', 'performance', code)(app, cors, log, performance);
    app.get('/x', (ctx) => ctx.json({ ok: true }));
    const { base } = await start(app as App);
    const preflight = await fetch(`${base}/x`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
    });
    expect(preflight.status).toBe(204);
    await (await fetch(`${base}/x`)).text();
    await until(() => lines.length === 2 && appStats(app).inflight === 0);
    expect(lines.map((line) => line.slice(0, 3))).toEqual([
      ['OPTIONS', '/x', 204],
      ['GET', '/x', 200],
    ]);
    for (const line of lines) expect(line.at(-1)).toMatch(/^\d+\.\d$/);
  });
});
