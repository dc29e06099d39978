import { CancelledError } from '../errors/cancelled-error';
import { CircuitOpenError } from '../errors/circuit-open-error';
import type { Emitter } from '../events/emitter';
import { controllerOf } from '../features/feature';
import { type Clock, type TimerHandle, timerDelay } from '../internal/clock';
import { freeze } from '../internal/freeze';
import { sleep } from '../internal/sleep';
import type { SchedulerController, SchedulerStats } from '../types/controllers';
import type { ClientEvents, ParkReason, SchedulerEventBase } from '../types/events';
import type { SchedulerView } from '../types/inspect';
import type { Priority } from '../types/options';
import { checkGroup, checkPrioritize } from './controller';
import { Entry, type EntryState } from './entry';
import type { AttemptGate, SchedulerHooks, SchedulerJob } from './gate';
import { Group, JobClass, Limiter } from './job-class';
import { Lanes } from './lanes';
import type { SchedulerConfig } from './options';
import { RateBudget } from './rate-budget';

const NO_LIMITERS: readonly Limiter[] = /* @__PURE__ */ freeze([]);
/** Bound on the host -> limiter memo (a crawler may see unbounded hosts). */
const HOST_MEMO_LIMIT = 1000;

type SchedulerEventName =
  | 'request-queued'
  | 'request-dequeued'
  | 'request-started'
  | 'request-delayed'
  | 'request-scheduled'
  | 'request-prioritized'
  | 'request-rejected';

/**
 * The request scheduler: admits flight owners' network attempts under a global concurrency cap,
 * per-host caps, an optional rate budget and (for the adaptive engine) per-endpoint ceilings;
 * orders waiting jobs by lane (weighted round-robin 4:2:1, FIFO within a lane); parks jobs during
 * retry waits and rate waits without a slot; pauses, resumes, cancels and re-prioritizes groups.
 *
 * Counting invariant, true between any two statements that can run user code (event listeners):
 *   stats.active + stats.queued + stats.delayed = live jobs (entered, not yet completed/rejected)
 * which holds because every state change updates its counter before any event is emitted.
 *
 * Costs: enqueue and dequeue are O(1) in the number of queued jobs (linked lists, no array
 * shifting); skipping a saturated host or paused group costs O(log classes) once per blocking
 * episode, never a scan of the jobs behind it. One timer per parked job plus one for the budget.
 */
export class Scheduler implements AttemptGate {
  readonly enabled = true;
  readonly controller: SchedulerController;
  /** Read by schedulerView (inspect), like `caps`, `groups` and `budget`. */
  readonly config: SchedulerConfig;
  readonly #clock: Clock;
  readonly #events: Emitter<ClientEvents>;
  readonly #hooks: SchedulerHooks;
  readonly #lanes: Lanes;
  readonly budget: RateBudget | undefined;
  /** Jobs entered and not yet finished (their Entry sits on the job: no job -> entry table). */
  #live = 0;
  readonly #defaultClass: JobClass;
  readonly #classes = new Map<string, JobClass>();
  readonly groups = new Map<string, Group>();
  /** Configured caps, by the `hosts` option key. */
  readonly caps = new Map<string, Limiter>();
  /** A request's hostname to its cap's limiter, or null when uncapped. */
  readonly #hostMemo = new Map<string, Limiter | null>();
  readonly #endpoints = new Map<string, Limiter>();
  #active = 0;
  #delayed = 0;
  #completed = 0;
  #rejected = 0;
  /**
   * Jobs parked for rate budget, in the order they were taken: each had a free slot but no
   * budget. A job that ends meanwhile stays in the list (its `rateParkedAt` is -1): taking it
   * out would be a search, O(n^2) to cancel n parked jobs under a large `concurrency`.
   */
  #rateParked: Entry[] = [];
  /** Jobs parked for rate budget now: > 0 exactly when #budgetTimer exists (one serves all). */
  #parked = 0;
  #budgetTimer: TimerHandle | undefined = undefined;
  /** > 0 while dispatching or inside batch(): nested dispatch requests set #pending instead. */
  #hold = 0;
  #pending = false;

  constructor(config: SchedulerConfig, events: Emitter<ClientEvents>, hooks: SchedulerHooks) {
    this.config = config;
    this.#clock = hooks.clock;
    this.#events = events;
    this.#hooks = hooks;
    this.#lanes = new Lanes(config.priority);
    this.budget = config.rateLimit
      ? new RateBudget(config.rateLimit.requests, config.rateLimit.interval)
      : undefined;
    this.#defaultClass = new JobClass('', undefined, NO_LIMITERS, NO_LIMITERS, this.#lanes.count);
    for (const [host, cap] of config.hosts) this.caps.set(host, new Limiter(host, cap));
    this.controller = controllerOf(this, [
      'stats',
      'pauseGroup',
      'resumeGroup',
      'cancelGroup',
      'prioritize',
    ]);
  }

  // ── AttemptGate ───────────────────────────────────────────────────────────────────────────

  enter(job: SchedulerJob): void {
    const entry = new Entry(job, this.#classOf(job), this.#lanes.laneOf(job.spec.priority));
    entry.cls.refs++;
    entry.cls.group?.entries.add(entry);
    if (job.gateEntry === undefined) this.#live++;
    job.gateEntry = entry;
  }

  acquire(job: SchedulerJob): boolean {
    let entry = job.gateEntry;
    if (entry === undefined) {
      this.enter(job);
      entry = job.gateEntry!;
    }
    const state = entry.state;
    // New, or back from a retry wait (its timer fired); `done`: ended before it asked, answered
    // below; queued or active: it already has its answer.
    if (state === 'new' || state === 'delayed') this.#queue(entry, false);
    else if (state !== 'done') return true;
    this.#dispatch();
    // Dispatch may have started it, parked it for rate budget, or refused it (circuit).
    const now = stateOf(entry);
    if (now === 'active') return true;
    if (now === 'done') this.#hooks.resume(job, entry.error);
    else entry.waiting = true;
    return false;
  }

  park(job: SchedulerJob, reason: ParkReason, delay: number): Promise<void> {
    const entry = job.gateEntry;
    if (entry === undefined || entry.state !== 'active') return sleep(this.#clock, delay, job);
    this.#releaseSlot(entry);
    entry.state = 'delayed';
    this.#delayed++;
    const promise = new Promise<void>((resolve, reject) => {
      entry.resolve = resolve;
      entry.reject = reject;
    });
    entry.timer = this.#clock.setTimeout(() => this.#wake(entry), timerDelay(delay));
    this.#emit('request-delayed', entry, { reason, delay });
    this.#dispatch();
    return promise;
  }

  cancel(job: SchedulerJob): void {
    const entry = job.gateEntry;
    if (entry === undefined || entry.state === 'done') return;
    this.#end(entry, 'rejected', job.aborted ? job.reason : new CancelledError(job.spec));
    this.#dispatch();
  }

  finish(job: SchedulerJob, outcome: 'completed' | 'rejected'): void {
    const entry = job.gateEntry;
    if (entry === undefined) return;
    job.gateEntry = undefined;
    this.#live--;
    if (entry.state === 'done') return;
    this.#end(entry, outcome);
    this.#dispatch();
  }

  batch(fn: () => void): void {
    this.#hold++;
    try {
      fn();
    } finally {
      this.#hold--;
      this.#dispatch();
    }
  }

  // ── SchedulerController ───────────────────────────────────────────────────────────────────

  stats(): SchedulerStats {
    const s = this.#lanes.sizes;
    return {
      active: this.#active,
      queued: this.#lanes.total,
      delayed: this.#delayed,
      completed: this.#completed,
      rejected: this.#rejected,
      lanes:
        s.length === 3
          ? { high: s[0]!, normal: s[1]!, low: s[2]! }
          : { high: 0, normal: s[0]!, low: 0 },
    };
  }

  /** Freezes the group's queued jobs (running ones finish); emits `queue-paused` when it changes. */
  pauseGroup(name: string): void {
    checkGroup(name);
    const group = this.#group(name);
    if (group.paused) return;
    group.paused = true;
    if (this.#events.has('queue-paused')) this.#events.emit('queue-paused', { group: name });
  }

  /** Re-admits a paused group's jobs at their places; emits `queue-resumed` when it changes. */
  resumeGroup(name: string): void {
    checkGroup(name);
    const group = this.groups.get(name);
    if (group === undefined || !group.paused) return;
    group.paused = false;
    for (const cls of group.classes) this.#lanes.readmit(cls);
    if (group.idle) this.groups.delete(name);
    if (this.#events.has('queue-resumed')) this.#events.emit('queue-resumed', { group: name });
    this.#dispatch();
  }

  /**
   * Rejects every queued, parked and running job of the group: the client cancels each flight
   * (callers get CancelledError) and calls `cancel(job)`, which counts it rejected and emits
   * `request-rejected`. Dispatch is held meanwhile so no job of the group starts just to die.
   *
   * The client always ends the job itself: a flight leaves the dedup map before its callers are
   * cancelled, so none joins it meanwhile and its last cancel calls `cancel(job)`. A job it does
   * not end is one whose flight is ending already (cancelGroup from its `success` or `error`
   * listener): its `finish` counts it completed, as its outcome was; dropping it here counted it
   * rejected.
   */
  cancelGroup(name: string): void {
    checkGroup(name);
    const group = this.groups.get(name);
    if (group === undefined || group.entries.size === 0) return;
    this.#hold++;
    try {
      for (const entry of [...group.entries]) {
        if (entry.state === 'done') continue;
        const message = `Request cancelled: group "${name}" was cancelled`;
        const error = new CancelledError(entry.job.spec, { message });
        this.#hooks.cancelJob(entry.job, error);
      }
    } finally {
      this.#hold--;
    }
    this.#dispatch();
  }

  /**
   * Moves the queued jobs whose group is `selector`, or whose request key it names (in any
   * spelling, as a key written by hand), to the back of the `priority` lane (in their arrival
   * order); returns how many moved. Parked and running jobs are not moved. O(live jobs): an
   * administrative operation, not a per-request one.
   */
  prioritize(selector: string, priority: Priority): number {
    checkPrioritize(this.config.priority, selector, priority);
    const to = this.#lanes.laneOf(priority);
    // Once per call, not per job: a key in any spelling matches; a group matches as written.
    const key = this.#hooks.keyOf(selector);
    const matches: Entry[] = [];
    // Queued jobs are exactly those in the lane queues; every class with one is live.
    for (const cls of [this.#defaultClass, ...this.#classes.values()]) {
      for (const queue of cls.queues) {
        if (queue.lane === to) continue;
        for (let entry = queue.head; entry !== undefined; entry = entry.next) {
          const { spec } = entry.job;
          if (spec.key === key || spec.group === selector) matches.push(entry);
        }
      }
    }
    if (matches.length === 0) return 0;
    matches.sort((a, b) => a.seq - b.seq);
    const toName = this.#lanes.nameOf(to);
    let moved = 0;
    for (const entry of matches) {
      // A listener of an earlier move may have cancelled, started or moved it meanwhile.
      if (stateOf(entry) !== 'queued' || entry.lane === to) continue;
      moved++;
      const from = this.#lanes.nameOf(entry.lane);
      this.#lanes.move(entry, to);
      this.#emit('request-prioritized', entry, { from, to: toName });
    }
    this.#dispatch();
    return moved;
  }

  // ── the adaptive seam ─────────────────────────────────────────────────────────────────────

  /**
   * Caps the simultaneous attempts of one endpoint (`METHOD pathname`); undefined removes the
   * cap. Running jobs finish; queued jobs of the endpoint wait at their places. Half-open probes
   * bypass it (they are still counted). Called by the adaptive engine only, and only when the
   * config has `endpointCeilings` (its concurrency switch), with a ceiling >= minConcurrency >= 1.
   */
  setEndpointCeiling(endpoint: string, ceiling: number | undefined): void {
    const limiter = this.#endpointLimiter(endpoint);
    const wasSaturated = limiter.saturated;
    limiter.cap = ceiling ?? Infinity;
    if (wasSaturated && !limiter.saturated) {
      for (const cls of limiter.classes) this.#lanes.readmit(cls);
      this.#dispatch();
    }
    this.#dropIdleEndpoint(limiter);
  }

  /** Attempts of an endpoint holding a slot now (tracked when `endpointCeilings` is on). */
  activeFor(endpoint: string): number {
    return this.#endpoints.get(endpoint)?.active ?? 0;
  }

  /** Internal sizes for leak checks in tests. */
  get debug(): { entries: number; classes: number; groups: number; budgetTimer: boolean } {
    return {
      entries: this.#live,
      classes: this.#classes.size,
      groups: this.groups.size,
      budgetTimer: this.#budgetTimer !== undefined,
    };
  }

  // ── dispatch ──────────────────────────────────────────────────────────────────────────────

  #dispatch(): void {
    if (this.#hold > 0) {
      this.#pending = true;
      return;
    }
    this.#hold = 1;
    try {
      do {
        this.#pending = false;
        this.#drain();
      } while (this.#pending);
    } finally {
      this.#hold = 0;
    }
  }

  /**
   * Starts jobs while a slot is free: lane order, then the circuit gate, then rate budget. A job
   * with a free slot but no budget is parked (a slot each: the others stay queued behind them).
   */
  #drain(): void {
    const budget = this.budget;
    while (this.#active + this.#parked < this.config.concurrency) {
      const mark = this.#lanes.mark();
      const entry = this.#lanes.next();
      if (entry === undefined) return;
      const { spec } = entry.job;
      // Pre-start circuit gate: the circuit may have opened while the job waited (the spec is
      // the error's init too: its `endpoint` names the circuit).
      if (!entry.job.probe && !this.#hooks.permits(spec.endpoint)) {
        this.#end(entry, 'refused', new CircuitOpenError(spec, spec));
        continue;
      }
      let now = 0;
      if (budget !== undefined) {
        try {
          now = this.#clock.now();
          // Behind jobs already waiting for budget, or none left: it waits too.
          if (this.#parked > 0 || !budget.available(now)) {
            // Not this job's turn yet after all: undo the cursor move, so lane order is kept.
            this.#lanes.restore(mark);
            this.#parkForBudget(entry, now, budget.freeAt() - now);
            continue;
          }
        } catch (error) {
          // The clock's `now` or setTimeout threw: this job ends with it (refused, like the
          // circuit gate's), never the caller that freed the slot (a flight's end, resumeGroup).
          this.#end(entry, 'refused', error);
          continue;
        }
      }
      this.#start(entry);
      // The budget counts attempts: not one cancelled by a listener as it left the queue (no job
      // starts meanwhile, dispatch being held).
      if (budget !== undefined && stateOf(entry) === 'active') budget.take(now);
    }
  }

  #start(entry: Entry): void {
    entry.state = 'active';
    this.#active++;
    const counted = entry.cls.counted;
    for (let i = 0; i < counted.length; i++) counted[i]!.active++;
    this.#emit('request-dequeued', entry);
    // A listener may have cancelled the job (#end): then it never started.
    if (entry.state === 'active') this.#emit('request-started', entry);
    if (entry.waiting) {
      entry.waiting = false;
      this.#hooks.resume(entry.job);
    }
  }

  #releaseSlot(entry: Entry): void {
    this.#active--;
    const counted = entry.cls.counted;
    for (let i = 0; i < counted.length; i++) {
      const limiter = counted[i]!;
      // Saturated → not saturated: its blocked classes compete again.
      if (--limiter.active === limiter.cap - 1) {
        for (const cls of limiter.classes) this.#lanes.readmit(cls);
      }
    }
  }

  /**
   * Puts a new job, or one whose wait ended, into its lane: at the back, or (`front`: back from
   * a rate wait, it was next) at its old place. Emits `request-scheduled` for a job back from a
   * wait, then `request-queued` with its position in the lane.
   */
  #queue(entry: Entry, front: boolean): void {
    if (entry.state === 'delayed') {
      // Announced before it takes its place: a listener that cancels it ends a delayed job, and
      // nobody hears `request-dequeued` for a job whose `request-queued` was never emitted.
      this.#emit('request-scheduled', entry);
      if (entry.state !== 'delayed') return;
      this.#delayed--;
    }
    entry.state = 'queued';
    const position = this.#lanes.push(entry, front);
    this.#emit('request-queued', entry, { position });
  }

  #parkForBudget(entry: Entry, now: number, delay: number): void {
    // The timer first: a clock that throws leaves the job as it was (queued, out of its lane).
    if (this.#parked === 0) {
      this.#budgetTimer = this.#clock.setTimeout(this.#onBudget, timerDelay(delay));
    }
    this.#parked++;
    this.#rateParked.push(entry);
    entry.state = 'delayed';
    entry.rateParkedAt = now;
    this.#delayed++;
    this.#emit('request-dequeued', entry);
    if (entry.state === 'delayed') {
      this.#emit('request-delayed', entry, { reason: 'rate-limit', delay: Math.max(0, delay) });
    }
  }

  /** Budget freed: the jobs that waited for it go back to their places in their lanes, first. */
  readonly #onBudget = (): void => {
    this.#budgetTimer = undefined;
    const parked = this.#rateParked;
    this.#rateParked = [];
    this.#parked = 0;
    for (const entry of parked) entry.rateParkedAt = -1;
    // Held: a listener's dispatch must not start a job before all of them are back in place.
    this.batch(() => {
      for (const entry of parked) {
        // A listener of an earlier one's events may have cancelled it.
        if (entry.state === 'delayed') this.#queue(entry, true);
      }
    });
  };

  /** A retry wait ended: the client's `park` promise resolves and it calls `acquire` again. */
  #wake(entry: Entry): void {
    entry.timer = undefined;
    const resolve = entry.resolve;
    entry.resolve = entry.reject = undefined;
    resolve?.();
  }

  /**
   * Ends a job in any state: undoes that state (lane, slot, timers), counts the outcome, emits,
   * and answers a waiting acquire (the `resume` hook) or rejects a pending park with `error`.
   * `refused` (the pre-start circuit gate) is a job the scheduler dropped: counted rejected,
   * without `request-rejected`, which is for cancellations.
   */
  #end(entry: Entry, outcome: 'completed' | 'rejected' | 'refused', error?: unknown): void {
    const was = entry.state;
    if (was === 'queued') {
      // Still in its lane unless the dispatcher has just taken it out (circuit gate).
      if (entry.queue !== undefined) this.#lanes.remove(entry);
    } else if (was === 'active') {
      this.#releaseSlot(entry);
    } else if (was === 'delayed') {
      this.#delayed--;
      if (entry.timer !== undefined) {
        this.#clock.clearTimeout(entry.timer);
        entry.timer = undefined;
      }
      if (entry.rateParkedAt >= 0) {
        // Left in #rateParked (ended: #onBudget skips it) until the list is dropped.
        entry.rateParkedAt = -1;
        if (--this.#parked === 0) {
          this.#clock.clearTimeout(this.#budgetTimer);
          this.#budgetTimer = undefined;
          this.#rateParked = [];
        }
      }
    }
    entry.state = 'done';
    entry.error = error;
    if (outcome === 'completed') this.#completed++;
    else this.#rejected++;
    this.#forget(entry);
    if (was === 'queued') this.#emit('request-dequeued', entry);
    if (outcome === 'rejected') this.#emit('request-rejected', entry, { reason: 'cancelled' });
    if (entry.waiting) {
      entry.waiting = false;
      this.#hooks.resume(entry.job, error);
      return;
    }
    const reject = entry.reject;
    entry.resolve = entry.reject = undefined;
    if (reject !== undefined) reject(error);
  }

  // ── classes, groups, limiters ─────────────────────────────────────────────────────────────

  #classOf(job: SchedulerJob): JobClass {
    const { spec } = job;
    const host = this.#hostLimiter(spec.host);
    const group = spec.group === undefined ? undefined : this.#group(spec.group);
    const endpoint = this.config.endpointCeilings ? this.#endpointLimiter(spec.endpoint) : null;
    if (host === null && group === undefined && endpoint === null) return this.#defaultClass;
    // A probe bypasses its endpoint's ceiling, so it needs a class of its own.
    const probe = endpoint !== null && job.probe;
    const key = `${host?.key ?? ''}\u0000${group?.name ?? ''}\u0000${endpoint?.key ?? ''}\u0000${probe ? 'p' : ''}`;
    let cls = this.#classes.get(key);
    if (cls === undefined) {
      const counted: Limiter[] = [];
      if (host !== null) counted.push(host);
      if (endpoint !== null) counted.push(endpoint);
      const blockers = probe ? counted.filter((l) => l !== endpoint) : counted;
      cls = new JobClass(key, group, blockers, counted, this.#lanes.count);
      this.#classes.set(key, cls);
      for (const limiter of counted) limiter.classes.add(cls);
      group?.classes.add(cls);
    }
    return cls;
  }

  /** Drops an ended job's references; forgets its class and group when nothing else needs them. */
  #forget(entry: Entry): void {
    const { cls } = entry;
    const { group } = cls;
    group?.entries.delete(entry);
    if (--cls.refs === 0 && cls !== this.#defaultClass) {
      this.#classes.delete(cls.key);
      for (const limiter of cls.counted) {
        limiter.classes.delete(cls);
        this.#dropIdleEndpoint(limiter);
      }
      group?.classes.delete(cls);
    }
    if (group?.idle) this.groups.delete(group.name);
  }

  #group(name: string): Group {
    let group = this.groups.get(name);
    if (group === undefined) {
      group = new Group(name);
      this.groups.set(name, group);
    }
    return group;
  }

  #hostLimiter(host: string): Limiter | null {
    if (this.caps.size === 0) return null;
    let limiter = this.#hostMemo.get(host);
    if (limiter === undefined) {
      // `spec.host` is the lower-cased hostname: every port of a host shares its cap, and so
      // does its fully qualified spelling (`api.x.`). Once per host (memo), not per job.
      limiter = this.caps.get(host.replace(/\.$/, '')) ?? null;
      if (this.#hostMemo.size >= HOST_MEMO_LIMIT) this.#hostMemo.clear();
      this.#hostMemo.set(host, limiter);
    }
    return limiter;
  }

  #endpointLimiter(endpoint: string): Limiter {
    let limiter = this.#endpoints.get(endpoint);
    if (limiter === undefined) {
      limiter = new Limiter(endpoint, Infinity);
      this.#endpoints.set(endpoint, limiter);
    }
    return limiter;
  }

  /** An endpoint limiter with no cap and no jobs is forgotten (host caps are kept). */
  #dropIdleEndpoint(limiter: Limiter): void {
    if (
      limiter.cap === Infinity &&
      limiter.classes.size === 0 &&
      this.#endpoints.get(limiter.key) === limiter
    ) {
      this.#endpoints.delete(limiter.key);
    }
  }

  // ── events ────────────────────────────────────────────────────────────────────────────────

  /** Emits a scheduler event about `entry` (the base fields, then `extra`) if anyone listens. */
  #emit<N extends SchedulerEventName>(
    name: N,
    entry: Entry,
    extra?: Omit<ClientEvents[N], keyof SchedulerEventBase>,
  ): void {
    if (!this.#events.has(name)) return;
    const { spec } = entry.job;
    this.#events.emit(name, {
      id: entry.job.id,
      key: spec.key,
      method: spec.method,
      url: spec.url,
      priority: this.#lanes.nameOf(entry.lane),
      ...extra,
    } as ClientEvents[N]);
  }
}

/** Reads the state afresh (TypeScript would keep a narrowing across calls that change it). */
function stateOf(entry: Entry): EntryState {
  return entry.state;
}

/**
 * Configuration and load now, for `inspect(client).scheduler()` (O(hosts + groups)): a function
 * beside the class, so an app that never inspects does not carry it.
 */
export function schedulerView(s: Scheduler, now: number): SchedulerView {
  const { config, budget } = s;
  const hosts: { host: string; cap: number; active: number }[] = [];
  for (const limiter of s.caps.values()) {
    hosts.push({ host: limiter.key, cap: limiter.cap, active: limiter.active });
  }
  const pausedGroups: string[] = [];
  for (const group of s.groups.values()) if (group.paused) pausedGroups.push(group.name);
  return {
    enabled: true,
    concurrency: config.concurrency,
    priorityLanes: config.priority,
    stats: s.stats(),
    rateLimit:
      config.rateLimit && budget ? { ...config.rateLimit, used: budget.used(now) } : undefined,
    hosts,
    pausedGroups,
  };
}
