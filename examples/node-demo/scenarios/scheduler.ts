import { type Clock, type Priority, type SchedulerStats, systemClock } from '@keel/core';
import { expect, type Scenario } from '../scenario';

const BURST = 200;
const SCHEDULER = {
  concurrency: 4,
  priority: true,
  rateLimit: { requests: 40, interval: 250 },
} as const;
/** Issue order, repeated: 40 high, 80 normal, 80 low, interleaved so no lane arrives first. */
const PATTERN: readonly Priority[] = ['low', 'normal', 'high', 'low', 'normal'];
const LETTER: Record<Priority, string> = { high: 'H', normal: 'N', low: 'L' };

export const schedulerScenario: Scenario = {
  title: 'Scheduler: a burst under a rate limit',
  story:
    `${BURST} requests are issued at once (40 high, 80 normal, 80 low priority, interleaved) by a ` +
    `client with scheduler {concurrency: ${SCHEDULER.concurrency}, priority: true, rateLimit: ` +
    `{requests: ${SCHEDULER.rateLimit.requests}, interval: ${SCHEDULER.rateLimit.interval}}}. ` +
    'At most 4 run at a time and at most 40 start per 250 ms; queued jobs are served from the ' +
    'high, normal and low lanes by weighted round-robin 4:2:1, FIFO within a lane.',
  async run({ server, log, extraClient }) {
    // The client's clock, with its last reading kept: the rate budget reads it just before each
    // start, so a start stamped with that reading is measured exactly as the limit counts it. A
    // listener's own Date.now() can lag by milliseconds when the machine is busy.
    let lastReading = 0;
    const clock: Clock = { ...systemClock, now: () => (lastReading = systemClock.now()) };
    const client = extraClient('scheduler', {
      cache: { enabled: false },
      retry: { attempts: 1 }, // no retries: one attempt per request
      scheduler: SCHEDULER,
      clock,
    });
    const scheduler = client.scheduler();
    const starts: { priority: Priority; at: number }[] = [];
    let parked = 0;
    const offs = [
      client.on('request-started', ({ priority }) => starts.push({ priority, at: lastReading })),
      client.on('request-delayed', ({ reason }) => {
        if (reason === 'rate-limit') parked++;
      }),
    ];
    // Lanes in the order their jobs finished, leaving out the first `concurrency` jobs, which found
    // free slots and started as they were issued: the lanes decide the order of every job after.
    const finished: Priority[] = [];
    const hitsBefore = server.hits('/work');
    const progress = setInterval(() => log.say(`draining:  ${show(scheduler.stats())}`), 250);
    try {
      const burst = Array.from({ length: BURST }, (_, n) => {
        const priority = PATTERN[n % PATTERN.length] as Priority;
        return client.get('/work', { params: { n }, priority }).then(() => {
          if (n >= SCHEDULER.concurrency) finished.push(priority);
        });
      });
      log.say(`issued:    ${show(scheduler.stats())}`);
      await Promise.all(burst);
    } finally {
      clearInterval(progress);
      for (const off of offs) off();
    }
    const stats = scheduler.stats();
    log.say(`drained:   ${show(stats)}`);

    const queued = starts.slice(SCHEDULER.concurrency).map((s) => LETTER[s.priority]);
    const rounds =
      queued
        .join('')
        .slice(0, 28)
        .match(/.{1,7}/g) ?? [];
    log.say(`served order after the first ${SCHEDULER.concurrency}: ${rounds.join(' ')} …`);
    const last = (p: Priority) => finished.lastIndexOf(p) + 1;
    const firstLow = finished.indexOf('low');
    log.say(
      `of the ${finished.length} queued jobs, ${firstLow} finished before the first low ` +
        `(${finished.slice(0, firstLow).filter((p) => p === 'high').length} high); the last high ` +
        `finished #${last('high')}, the last normal #${last('normal')}, the last low #${last('low')}`,
    );
    const busiest = busiestWindow(starts, SCHEDULER.rateLimit.interval);
    log.say(
      `most attempts started in any ${SCHEDULER.rateLimit.interval} ms: ${busiest} (limit ` +
        `${SCHEDULER.rateLimit.requests}); jobs parked for rate budget: ${parked}`,
    );

    expect(server.hits('/work') - hitsBefore === BURST, `the server saw ${BURST} requests`);
    expect(
      stats.completed === BURST && stats.queued + stats.active + stats.delayed === 0,
      'the scheduler drained: every job completed',
    );
    expect(rounds[0] === 'HHHHNNL', `lanes served 4:2:1, got ${rounds[0]}`);
    expect(last('high') < last('normal') && last('normal') < last('low'), 'high lane drains first');
    expect(busiest <= SCHEDULER.rateLimit.requests, `at most 40 starts per 250 ms, got ${busiest}`);
    expect(parked > 0, 'the rate limit parked jobs');
  },
};

function show(s: SchedulerStats): string {
  const { high, normal, low } = s.lanes;
  return (
    `queued ${String(s.queued).padStart(3)} (high ${String(high).padStart(2)}, normal ` +
    `${String(normal).padStart(2)}, low ${String(low).padStart(2)}), active ${s.active}, ` +
    `delayed ${s.delayed}, completed ${String(s.completed).padStart(3)}`
  );
}

/** The most starts inside any window (t - interval, t], the window the rate budget counts. */
function busiestWindow(starts: readonly { at: number }[], interval: number): number {
  let most = 0;
  let from = 0;
  for (let to = 0; to < starts.length; to++) {
    const end = starts[to]?.at ?? 0;
    while ((starts[from]?.at ?? end) <= end - interval) from++;
    most = Math.max(most, to - from + 1);
  }
  return most;
}
