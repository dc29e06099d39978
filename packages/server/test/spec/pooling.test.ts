// Spec 001 "What the service does" 1-2: one ctx per request lifecycle, pooled request state, and
// the rule "copy required properties (a route parameter) into locals before background work". The
// background work here runs after every response went out, as a delayed callback would.
import { describe, expect, it } from 'vitest';
import { type Context, createApp, isReleasedContextError } from '../../src/index';
import { call, serve } from '../blackbox/helpers';

describe('spec 001 pooled ctx', () => {
  it('a route parameter copied before background work keeps its value once later requests reused the pooled state', async () => {
    const app = createApp();
    const errors: unknown[] = [];
    app.onError((err) => {
      errors.push(err);
    });
    const jobs: (() => void)[] = [];
    const done: string[] = [];
    const kept: Context[] = [];
    app.post('/jobs/:id', (ctx) => {
      const id = ctx.params.id ?? ''; // copied, as the spec requires
      kept.push(ctx);
      jobs.push(() => done.push(id));
      return ctx.status(202).json({ id });
    });
    const port = await serve(app);
    const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    // Sequential and concurrent requests: the pooled state serves one request after another.
    for (const id of ids.slice(0, 4)) {
      expect((await call(port, { method: 'POST', path: `/jobs/${id}` })).json()).toEqual({ id });
    }
    const replies = await Promise.all(
      ids.slice(4).map((id) => call(port, { method: 'POST', path: `/jobs/${id}` })),
    );
    expect(replies.map((r) => r.status)).toEqual([202, 202, 202, 202]);
    for (const job of jobs) job();
    expect(done.sort()).toEqual(ids);
    // One ctx per request lifecycle: none handed to two requests.
    expect(new Set(kept).size).toBe(ids.length);
    expect(errors).toEqual([]);
  });

  it('a ctx kept in a delayed callback does not answer or read for a later request (the spec forbids it; keel contains it)', async () => {
    const app = createApp();
    const errors: unknown[] = [];
    app.onError((err) => {
      errors.push(err);
    });
    let stale: Context | undefined;
    app.get('/first/:id', (ctx) => {
      stale = ctx;
      return ctx.send('first');
    });
    app.get('/second/:id', (ctx) => {
      // The delayed callback of the first request runs while this one is in flight.
      const seen = stale?.params.id;
      stale?.json({ wrong: true });
      return ctx.json({ mine: ctx.params.id, staleSaw: seen });
    });
    const port = await serve(app);
    expect((await call(port, { path: '/first/one' })).text).toBe('first');
    const second = await call(port, { path: '/second/two' });
    expect(second.status).toBe(200);
    expect(second.json()).toEqual({ mine: 'two', staleSaw: 'one' });
    expect(errors.some(isReleasedContextError)).toBe(true);
  });
});
