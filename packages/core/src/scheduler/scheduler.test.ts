import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../test/helpers';
import { EventEmitter } from '../events/emitter';
import type { RequestSpec } from '../request/resolve';
import type { ClientEvents } from '../types/events';
import type { SchedulerJob } from './gate';
import { resolveSchedulerOptions } from './options';
import { Scheduler } from './scheduler';

let nextId = 1;
function job(endpoint: string, probe = false): SchedulerJob {
  const id = nextId++;
  const [method, path] = endpoint.split(' ');
  return {
    id,
    probe,
    aborted: false,
    reason: undefined,
    onAbort: undefined,
    spec: {
      key: `${endpoint}#${id}`,
      endpoint,
      method,
      url: `https://h.test${path}`,
      host: 'h.test',
      priority: 'normal',
      group: undefined,
    } as unknown as RequestSpec,
  };
}

function scheduler(endpointCeilings: boolean, concurrency = 8) {
  const clock = new FakeClock();
  const events = new EventEmitter<ClientEvents>();
  const config = resolveSchedulerOptions({ concurrency }, endpointCeilings)!;
  const answers = new Map<SchedulerJob, (error: unknown) => void>();
  const s = new Scheduler(config, events, {
    clock,
    permits: () => true,
    cancelJob: () => {},
    keyOf: (selector) => selector,
    resume: (j, error) => answers.get(j)?.(error),
  });
  /** enter + acquire: started at once, or when the scheduler resumes the job. */
  const start = (j: SchedulerJob) => {
    let started = false;
    let error: unknown;
    answers.set(j, (e) => {
      if (e === undefined) started = true;
      else error = e;
    });
    s.enter(j);
    if (s.acquire(j)) started = true;
    return {
      get started() {
        return started;
      },
      get error() {
        return error;
      },
    };
  };
  return { s, clock, start };
}

describe('Scheduler: per-endpoint ceilings (the adaptive seam)', () => {
  it('caps one endpoint without touching others; raising the cap re-admits its jobs in order', async () => {
    const { s, start } = scheduler(true);
    s.setEndpointCeiling('GET /a', 1);
    const a1 = job('GET /a');
    const a2 = job('GET /a');
    const a3 = job('GET /a');
    const b1 = job('GET /b');
    const r = [a1, a2, a3, b1].map(start);
    await Promise.resolve();
    expect(r.map((x) => x.started)).toEqual([true, false, false, true]);
    expect(s.activeFor('GET /a')).toBe(1);
    expect(s.stats()).toMatchObject({ active: 2, queued: 2 });
    s.finish(a1, 'completed');
    await Promise.resolve();
    expect(r.map((x) => x.started)).toEqual([true, true, false, true]);
    s.setEndpointCeiling('GET /a', undefined);
    await Promise.resolve();
    expect(r[2]!.started).toBe(true);
    expect(s.activeFor('GET /a')).toBe(2);
  });

  it('lets a half-open probe bypass the ceiling (it is still counted)', async () => {
    const { s, start } = scheduler(true);
    s.setEndpointCeiling('GET /p', 1);
    const first = start(job('GET /p'));
    const waiting = start(job('GET /p'));
    const probe = start(job('GET /p', true));
    await Promise.resolve();
    expect([first.started, waiting.started, probe.started]).toEqual([true, false, true]);
    expect(s.activeFor('GET /p')).toBe(2);
  });

  it('lowering a ceiling lets running jobs finish and holds new ones', async () => {
    const { s, start } = scheduler(true);
    const jobs = [job('GET /c'), job('GET /c'), job('GET /c')];
    const r = jobs.map(start);
    expect(r.every((x) => x.started)).toBe(true);
    s.setEndpointCeiling('GET /c', 1);
    const late = start(job('GET /c'));
    s.finish(jobs[0]!, 'completed');
    s.finish(jobs[1]!, 'completed');
    await Promise.resolve();
    expect(late.started).toBe(false);
    s.finish(jobs[2]!, 'completed');
    await Promise.resolve();
    expect(late.started).toBe(true);
  });

  it('forgets classes, groups and endpoint limiters when their jobs are gone', async () => {
    const { s, start } = scheduler(true, 1);
    const jobs = [job('GET /x'), job('GET /y'), job('GET /z')];
    const r = jobs.map(start);
    expect(s.debug.classes).toBe(3);
    // Held dispatch (as cancelAll does): y and z must not start just to be cancelled.
    s.batch(() => {
      for (const j of jobs) {
        s.cancel(j);
        s.finish(j, 'rejected');
      }
    });
    await Promise.resolve();
    expect(r.map((x) => (x.error as Error | undefined)?.name)).toEqual([
      undefined,
      'CancelledError',
      'CancelledError',
    ]);
    expect(s.debug).toEqual({ entries: 0, classes: 0, groups: 0, budgetTimer: false });
    expect(s.stats()).toMatchObject({ active: 0, queued: 0, rejected: 3 });
  });
});

describe('group records', () => {
  // A paused group is remembered until resumed, jobs or not: `pauseGroup('g')` before any job
  // of `g` exists makes its jobs queue frozen (README, Groups). So the scheduler holds one small
  // record per group paused and not resumed, as many as the caller paused; nothing else keeps a
  // group (pinned here so a change to the records shows).
  function groupJob(endpoint: string, group: string): SchedulerJob {
    const j = job(endpoint);
    return { ...j, spec: { ...j.spec, group } as RequestSpec };
  }

  it('holds one record per paused group, until it is resumed', () => {
    const { s } = scheduler(false);
    for (let i = 0; i < 1000; i++) s.pauseGroup(`g${i}`);
    expect(s.debug.groups).toBe(1000);
    for (let i = 0; i < 1000; i++) s.resumeGroup(`g${i}`);
    expect(s.debug.groups).toBe(0);
  });

  it('keeps nothing for a group only resumed, cancelled or named', () => {
    const { s } = scheduler(false);
    for (let i = 0; i < 100; i++) {
      s.resumeGroup(`r${i}`);
      s.cancelGroup(`c${i}`);
      s.pauseGroup(`p${i}`);
      s.pauseGroup(`p${i}`);
      s.resumeGroup(`p${i}`);
    }
    expect(s.debug.groups).toBe(0);
  });

  it('a paused group whose jobs all ended stays paused until resumed; then it is forgotten', async () => {
    const { s, start } = scheduler(false);
    s.pauseGroup('g');
    const j = groupJob('GET /a', 'g');
    const r = start(j);
    expect(r.started).toBe(false);
    s.batch(() => {
      s.cancel(j);
      s.finish(j, 'rejected');
    });
    await Promise.resolve();
    expect(s.debug).toMatchObject({ entries: 0, classes: 0, groups: 1 });
    s.resumeGroup('g');
    expect(s.debug.groups).toBe(0);
  });
});
