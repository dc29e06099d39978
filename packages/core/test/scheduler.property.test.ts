import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Priority, SchedulerOptions } from '../src/index';
import { jsonResponse, type PromiseState, settle, type TestClient } from './helpers';
import { SCHEDULER_EVENTS, schedulerClient } from './scheduler.helpers';

type Host = 'a' | 'b' | 'c';
type Group = 'g1' | 'g2';
type Outcome = 'ok' | '503' | '429' | 'retry-after';

interface Job {
  host: Host;
  priority: Priority;
  group: Group | undefined;
  /** Response per attempt; attempts past the script succeed. */
  script: Outcome[];
  latency: number;
}

type Action =
  | { kind: 'submit'; job: Job }
  | { kind: 'advance'; ms: number }
  | { kind: 'pause' | 'resume' | 'cancelGroup'; group: Group }
  | { kind: 'cancel'; pick: number }
  | { kind: 'cancelAll' };

const jobArb: fc.Arbitrary<Job> = fc.record({
  host: fc.constantFrom<Host>('a', 'b', 'c'),
  priority: fc.constantFrom<Priority>('high', 'normal', 'low'),
  group: fc.option(fc.constantFrom<Group>('g1', 'g2'), { nil: undefined }),
  script: fc.array(fc.constantFrom<Outcome>('ok', '503', '503', '429', 'retry-after'), {
    maxLength: 3,
  }),
  latency: fc.integer({ min: 0, max: 120 }),
});

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { weight: 16, arbitrary: jobArb.map((job) => ({ kind: 'submit' as const, job })) },
  {
    weight: 10,
    arbitrary: fc.integer({ min: 0, max: 150 }).map((ms) => ({ kind: 'advance' as const, ms })),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constantFrom('pause' as const, 'resume' as const, 'cancelGroup' as const),
      group: fc.constantFrom<Group>('g1', 'g2'),
    }),
  },
  { weight: 2, arbitrary: fc.nat(50).map((pick) => ({ kind: 'cancel' as const, pick })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'cancelAll' as const }) },
);

const configArb: fc.Arbitrary<Config> = fc.record({
  concurrency: fc.integer({ min: 1, max: 4 }),
  priority: fc.boolean(),
  hosts: fc.record(
    { a: fc.integer({ min: 1, max: 3 }), b: fc.integer({ min: 1, max: 2 }) },
    { requiredKeys: [] },
  ),
  rateLimit: fc.option(
    fc.record({
      requests: fc.integer({ min: 1, max: 4 }),
      interval: fc.integer({ min: 10, max: 300 }),
    }),
    { nil: undefined },
  ),
});

const STATUS: Record<Outcome, { status: number; headers?: Record<string, string> }> = {
  ok: { status: 200 },
  '503': { status: 503 },
  '429': { status: 429 },
  'retry-after': { status: 429, headers: { 'retry-after': '1' } },
};

interface Config {
  concurrency: number;
  priority: boolean;
  hosts: Partial<Record<'a' | 'b', number>>;
  rateLimit: { requests: number; interval: number } | undefined;
}

async function run(cfg: Config, actions: Action[]): Promise<void> {
  const hosts: Record<string, number> = {};
  for (const [h, cap] of Object.entries(cfg.hosts)) hosts[`${h}.test`] = cap as number;
  const scheduler: SchedulerOptions = {
    concurrency: cfg.concurrency,
    priority: cfg.priority,
    hosts,
    ...(cfg.rateLimit ? { rateLimit: cfg.rateLimit } : {}),
  };

  const problems: string[] = [];
  const jobs: Job[] = [];
  const attempts = new Map<string, number>();
  const callTimes: number[] = [];
  const inflight = new Map<string, number>();
  let t!: TestClient;
  t = schedulerClient(
    scheduler,
    { retry: { attempts: 3, baseDelay: 20, maxDelay: 100 }, circuitBreaker: { enabled: false } },
    {
      handler: (call) => {
        const url = new URL(call.url);
        const n = Number(url.pathname.split('/')[2]);
        const job = jobs[n]!;
        const attempt = attempts.get(call.url) ?? 0;
        attempts.set(call.url, attempt + 1);
        callTimes.push(t.clock.now());
        // Calls neither answered nor aborted, per host: what holds a connection right now.
        const open = t.fake.calls.filter((c) => !c.done);
        const perHost = open.filter((c) => new URL(c.url).hostname === url.hostname).length;
        if (open.length > cfg.concurrency) problems.push(`${open.length} concurrent attempts`);
        const cap = hosts[url.hostname];
        if (cap !== undefined && perHost > cap)
          problems.push(`${perHost} attempts on ${url.hostname}`);
        inflight.set(url.hostname, perHost);
        const outcome = STATUS[job.script[attempt] ?? 'ok'];
        t.clock.setTimeout(
          () =>
            call.respond(jsonResponse({ n }, { status: outcome.status, headers: outcome.headers })),
          job.latency,
        );
      },
    },
  );
  const { client } = t;

  let requests = 0;
  client.on('request', () => requests++);
  const rejectedIds = new Map<number, number>();
  client.on('request-rejected', (e) => rejectedIds.set(e.id, (rejectedIds.get(e.id) ?? 0) + 1));
  const check = (where: string) => {
    const s = client.scheduler().stats();
    if (s.active + s.queued + s.delayed + s.completed + s.rejected !== requests) {
      problems.push(`${where}: stats ${JSON.stringify(s)} for ${requests} jobs`);
    }
    if (s.queued !== s.lanes.high + s.lanes.normal + s.lanes.low) problems.push(`${where}: lanes`);
    if (s.active > cfg.concurrency) problems.push(`${where}: active ${s.active}`);
    if (Math.min(s.active, s.queued, s.delayed) < 0) problems.push(`${where}: negative`);
  };
  for (const name of SCHEDULER_EVENTS) client.on(name, () => check(name));

  const outcomes: Promise<PromiseState<unknown>>[] = [];
  const promises: { cancel(): void }[] = [];
  for (const action of actions) {
    switch (action.kind) {
      case 'submit': {
        const n = jobs.length;
        jobs.push(action.job);
        const p = client.get(`https://${action.job.host}.test/j/${n}`, {
          priority: action.job.priority,
          ...(action.job.group ? { scheduler: { group: action.job.group } } : {}),
        });
        promises.push(p);
        outcomes.push(settle(p));
        break;
      }
      case 'advance':
        await t.clock.advance(action.ms);
        break;
      case 'pause':
        client.scheduler().pauseGroup(action.group);
        break;
      case 'resume':
        client.scheduler().resumeGroup(action.group);
        break;
      case 'cancelGroup':
        client.cancelGroup(action.group);
        break;
      case 'cancel':
        if (promises.length > 0) promises[action.pick % promises.length]!.cancel();
        break;
      case 'cancelAll':
        client.cancelAll();
        break;
    }
    check(action.kind);
  }

  // Let everything finish: resume every group, then run time forward.
  client.scheduler().resumeGroup('g1');
  client.scheduler().resumeGroup('g2');
  let settledCount = 0;
  for (const o of outcomes) o.then(() => settledCount++);
  for (let i = 0; i < 400 && settledCount < outcomes.length; i++) await t.clock.advance(100);
  await t.clock.runAll();

  const results = await Promise.all(outcomes);
  const s = client.scheduler().stats();
  const cancelled = results.filter(
    (r) => r.state === 'rejected' && (r.reason as Error).name === 'CancelledError',
  ).length;
  expect(problems).toEqual([]);
  expect(settledCount).toBe(jobs.length);
  // Every job ended exactly once: completed or rejected, and rejected means cancelled.
  expect(requests).toBe(jobs.length);
  expect(s).toMatchObject({ active: 0, queued: 0, delayed: 0 });
  expect(s.completed + s.rejected).toBe(jobs.length);
  expect(s.rejected).toBe(cancelled);
  expect([...rejectedIds.values()].every((n) => n === 1)).toBe(true);
  expect(rejectedIds.size).toBe(s.rejected);
  // The rate budget: never more than `requests` attempts start in any `interval` window.
  if (cfg.rateLimit) {
    const { requests: max, interval } = cfg.rateLimit;
    for (const start of callTimes) {
      const inWindow = callTimes.filter((x) => x >= start && x < start + interval).length;
      expect(inWindow).toBeLessThanOrEqual(max);
    }
  }
  expect(t.clock.live).toBe(0);
}

describe('scheduler: properties over random job mixes', () => {
  it('keeps every limit and ends every job exactly once', async () => {
    await fc.assert(
      fc.asyncProperty(
        configArb,
        fc.array(actionArb, { minLength: 5, maxLength: 80, size: 'max' }),
        run,
      ),
      { numRuns: 100 },
    );
  }, 120_000);

  it('holds for a long burst of jobs under tight limits', async () => {
    const burst: Action[] = [];
    for (let i = 0; i < 150; i++) {
      burst.push({
        kind: 'submit',
        job: {
          host: (['a', 'b', 'c'] as const)[i % 3]!,
          priority: (['high', 'normal', 'low'] as const)[(i * 7) % 3]!,
          group: i % 4 === 0 ? 'g1' : undefined,
          script: i % 5 === 0 ? ['503'] : [],
          latency: (i * 13) % 50,
        },
      });
      if (i === 40) burst.push({ kind: 'pause', group: 'g1' });
      if (i === 90) burst.push({ kind: 'cancel', pick: 17 });
    }
    await run(
      {
        concurrency: 3,
        priority: true,
        hosts: { a: 1, b: 2 },
        rateLimit: { requests: 4, interval: 100 },
      },
      burst,
    );
  }, 60_000);
});
