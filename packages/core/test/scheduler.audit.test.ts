/**
 * Adversarial audit of the request scheduler, through the public API: lane order when jobs
 * start alone, rate-budget waits, pre-start circuit refusals, transparent-mode stats, re-entrant
 * listeners, bad arguments and state left behind.
 */
import { describe, expect, it } from 'vitest';
import { CancelledError, HttpError } from '../src/index';
import { debugOf, jsonResponse, settle } from './helpers';
import { answer, answerAll, calls, schedulerClient } from './scheduler.helpers';

/** Answers one call at a time (concurrency 1) until `total` calls were made and answered. */
async function drainOrder(t: ReturnType<typeof schedulerClient>, total: number) {
  while (t.fake.calls.length < total || t.fake.pending().length > 0) await answer(t);
  return calls(t);
}

describe('scheduler audit: lane order around a job that started alone', () => {
  it('a normal job that started alone does not hand the next turn to low: high goes first', async () => {
    const t = schedulerClient({ concurrency: 1, priority: true });
    t.client.get('/normal');
    t.client.get('/low', { priority: 'low' });
    t.client.get('/high-a', { priority: 'high' });
    t.client.get('/high-b', { priority: 'high' });
    expect(await drainOrder(t, 4)).toEqual(['/normal', '/high-a', '/high-b', '/low']);
  });

  it('a high flood still serves low fifth: the lone first high job uses one of the four turns', async () => {
    const t = schedulerClient({ concurrency: 1, priority: true });
    for (let i = 0; i < 8; i++) t.client.get(`/high/${i}`, { priority: 'high' });
    t.client.get('/low', { priority: 'low' });
    const got = await drainOrder(t, 9);
    expect(got[4]).toBe('/low');
  });

  it('after a normal blocker, a full mix is served HHHHNNL from the first round', async () => {
    const t = schedulerClient({ concurrency: 1, priority: true });
    t.client.get('/blocker');
    for (let i = 0; i < 8; i++) t.client.get(`/h/${i}`, { priority: 'high' });
    for (let i = 0; i < 4; i++) t.client.get(`/n/${i}`);
    for (let i = 0; i < 2; i++) t.client.get(`/l/${i}`, { priority: 'low' });
    const got = (await drainOrder(t, 15)).slice(1);
    expect(got.map((u) => u[1]!.toUpperCase()).join('')).toBe('HHHHNNLHHHHNNL');
  });

  it('a high blocker is one of its round’s four high turns', async () => {
    const t = schedulerClient({ concurrency: 1, priority: true });
    t.client.get('/blocker', { priority: 'high' });
    for (let i = 0; i < 8; i++) t.client.get(`/h/${i}`, { priority: 'high' });
    for (let i = 0; i < 4; i++) t.client.get(`/n/${i}`);
    for (let i = 0; i < 2; i++) t.client.get(`/l/${i}`, { priority: 'low' });
    const got = await drainOrder(t, 15);
    expect(got.map((u) => (u === '/blocker' ? 'H' : u[1]!.toUpperCase())).join('')).toBe(
      'HHHHNNLHHHHNNLH',
    );
  });
});

describe('scheduler audit: groups', () => {
  it('cancelGroup cancels a running and a queued job of the group, and nothing else', async () => {
    const t = schedulerClient({ concurrency: 1 });
    const hold = settle(t.client.get('/hold', { scheduler: { group: 'g1' } }));
    const next = settle(t.client.get('/next', { scheduler: { group: 'g1' } }));
    const survivor = t.client.get('/survivor', { scheduler: { group: 'g2' } });
    t.client.scheduler().cancelGroup('g1');
    for (const p of [hold, next]) {
      expect(((await p) as { reason: unknown }).reason).toBeInstanceOf(CancelledError);
    }
    await answerAll(t);
    expect((await survivor).status).toBe(200);
    expect(t.client.scheduler().stats()).toMatchObject({ rejected: 2, completed: 1 });
    expect(calls(t)).toEqual(['/hold', '/survivor']);
  });

  it('a retry-after wait parks the job; pause + cancel of its group rejects it and its timer goes', async () => {
    const t = schedulerClient({ concurrency: 1 }, { retry: { attempts: 2 } });
    const flaky = settle(t.client.get('/flaky', { scheduler: { group: 'g' } }));
    await answer(t, '/flaky', jsonResponse({}, { status: 429, headers: { 'retry-after': '1' } }));
    expect(t.of('request-delayed')[0]).toMatchObject({ reason: 'retry-after', delay: 1000 });
    const doomed = settle(t.client.get('/doomed', { scheduler: { group: 'g' } }));
    t.client.scheduler().pauseGroup('g');
    t.client.scheduler().cancelGroup('g');
    await doomed;
    expect((await flaky).state).toBe('rejected');
    expect(
      t
        .of('request-rejected')
        .map((e) => new URL(e.url).pathname)
        .sort(),
    ).toEqual(['/doomed', '/flaky']);
    t.client.scheduler().resumeGroup('g');
    expect(t.of('queue-resumed')).toEqual([{ group: 'g' }]);
    expect(t.clock.live).toBe(0);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 0, delayed: 0, rejected: 2 });
    expect(debugOf(t.client)).toMatchObject({ flights: 0 });
  });
});

describe('scheduler audit: retry waits', () => {
  it('a Retry-After park frees the slot for other work; the retry fails with HttpError', async () => {
    const t = schedulerClient(
      { concurrency: 1 },
      { retry: { attempts: 2 } },
      {
        handler: (c) =>
          c.url.includes('/limited')
            ? jsonResponse({}, { status: 429, headers: { 'retry-after': '4' } })
            : jsonResponse({ ok: true }),
      },
    );
    const limited = settle(t.client.get('/limited'));
    const other = t.client.get('/other');
    await t.clock.advance(0);
    expect(calls(t)).toEqual(['/limited', '/other']);
    expect(t.client.scheduler().stats().active).toBe(0);
    await t.clock.advance(4000);
    const r = await limited;
    expect((r as { reason: unknown }).reason).toBeInstanceOf(HttpError);
    await other;
    expect(calls(t).filter((u) => u === '/limited')).toHaveLength(2);
    expect(t.clock.live).toBe(0);
  });
});
