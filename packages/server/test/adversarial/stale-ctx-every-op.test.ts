// A ctx kept past its response (a timer, an await after the client was answered) while its
// pooled slot serves other requests: every accessor still reads its own request, every response
// operation is a reported no-op, and none reaches the request the slot serves now.
import { Agent } from 'node:http';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appStats } from '../../src/app';
import { type App, type Context, createApp, type Next } from '../../src/index';
import { raw, start } from '../helpers';
import { guardProcess } from './harness';

guardProcess();

let app: App;
let port: number;
const reported: string[] = [];
const mismatches: string[] = [];
const lateWork: Promise<void>[] = [];

/** Every accessor, then every sender, through a ctx whose request is over. */
async function afterward(ctx: Context, next: Next, who: string): Promise<void> {
  await sleep(who.length % 7); // spread out over the next requests
  const same = (what: string, got: unknown): void => {
    if (got !== who) mismatches.push(`${who} ${what}: ${String(got)}`);
  };
  same('header', ctx.header('x-who'));
  same('query', ctx.query('who'));
  same('cookie', ctx.cookie('who'));
  same('param', ctx.params.who);
  same('body', (ctx.body as { who?: string }).who);
  same('state', ctx.state.who);
  same('path', ctx.path.slice('/leak/'.length));
  same('validate', ctx.validate({ who: { type: 'string', required: true } }).who);
  if (ctx.signal.aborted) mismatches.push(`${who} signal aborted`);
  ctx.status(418).setHeader('x-leak', who).setCookie('leak', who).cacheControl({ noStore: true });
  ctx.json({ leak: who });
  ctx.send('leak');
  ctx.send(Buffer.from('leak'));
  const source = Readable.from(['leak']);
  await ctx.send(source);
  if (!source.destroyed) mismatches.push(`${who} stream not released`);
  ctx.redirect('/leak');
  await ctx.sendFile('package.json', { root: process.cwd() });
  await ctx.graphql('type Query { a: Int }');
  if (ctx.sseEvent('x', 1)) mismatches.push(`${who} sseEvent sent`);
  await ctx.sseInterval(() => 1, 5);
  // It must return a stream and the request had none: an ended one, whose writes do nothing
  // (a throw here, in a timer, ended the process).
  const stream = ctx.sseStream();
  if (!stream.closed || stream.send('x', 1) || stream.comment('x')) {
    mismatches.push(`${who} sseStream is live`);
  }
  if (ctx.sseStream() !== stream) mismatches.push(`${who} sseStream not the same`);
  await next();
}

beforeAll(async () => {
  app = createApp();
  app.onError((err) => {
    reported.push((err as Error).name);
  });
  app.use(async (ctx, next) => {
    await next();
    if (ctx.path.startsWith('/leak/')) lateWork.push(afterward(ctx, next, ctx.params.who!));
  });
  app.post('/leak/:who', (ctx) => {
    ctx.state.who = ctx.params.who;
    ctx.json({ me: ctx.params.who });
  });
  app.post('/victim/:who', (ctx) =>
    ctx.json({
      me: ctx.params.who,
      body: ctx.body,
      query: ctx.query('who'),
      header: ctx.header('x-who'),
      cookie: ctx.cookie('who'),
    }),
  );
  ({ port } = await start(app));
});

afterAll(() => app.close());

describe('stale ctx, every accessor and sender, 1200 interleaved requests on 16 sockets', () => {
  it('no answer carries another request’s data; each stale ctx is reported', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const wrong: string[] = [];
    let leaks = 0;
    const jobs: Promise<void>[] = [];
    for (let i = 0; i < 1200; i++) {
      const kind = i % 3 === 0 ? 'leak' : 'victim';
      if (kind === 'leak') leaks++;
      const who = `w${i}`;
      const job = raw(port, {
        method: 'POST',
        agent,
        path: `/${kind}/${who}?who=${who}`,
        headers: { 'x-who': who, cookie: `who=${who}`, 'content-type': 'application/json' },
        body: JSON.stringify({ who }),
      }).then((res) => {
        const want =
          kind === 'leak'
            ? { me: who }
            : { me: who, body: { who }, query: who, header: who, cookie: who };
        const leaked =
          res.headers['x-leak'] ?? res.headers['set-cookie'] ?? res.headers['cache-control'];
        if (res.status !== 200 || res.body !== JSON.stringify(want) || leaked !== undefined) {
          wrong.push(`${kind} ${who}: ${res.status} ${res.body} ${String(leaked)}`);
        }
      });
      jobs.push(job);
    }
    await Promise.all(jobs);
    await Promise.all(lateWork);
    agent.destroy();
    expect(wrong).toEqual([]);
    expect(mismatches).toEqual([]);
    // One report per stale ctx (its first operation), one per late next().
    expect(reported.length).toBe(2 * leaks);
    expect(new Set(reported)).toEqual(new Set(['ReleasedContextError']));
    expect(appStats(app).inflight).toBe(0);
  }, 60_000);
});
