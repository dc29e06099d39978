import { describe, expect, it } from 'vitest';
import { errorOf } from '../errors/errors.fixture';
import { EventEmitter } from '../events/emitter';
import { Tracker } from '../tracker/tracker';
import type { ClientEvents } from '../types/events';
import { AdaptiveEngine } from './engine';
import { AdaptiveObserver, classify } from './observer';
import { resolveAdaptiveOptions } from './options';

const EP = 'GET /a';
const URL_A = 'https://api.test/a';

/** Counts the attempt that a terminal event ends, as the client's tracker does. */
const attempted = (tracker: Tracker): true => {
  tracker.attempt();
  return true;
};

/** An engine with 2-sample windows, its observer on a bare emitter, and event helpers. */
function harness(scheduled: boolean) {
  let now = 0;
  /** While set, the clock's `now` throws it (a broken injected clock). */
  let broken: Error | undefined;
  const clock = {
    now: () => {
      if (broken) throw broken;
      return now;
    },
  };
  const options = resolveAdaptiveOptions({ enabled: true, latencyWindow: 4, outcomeWindow: 2 })!;
  const engine = new AdaptiveEngine({ options });
  const samples: { latency: number; outcome: string }[] = [];
  // Spy on samples through the public readout: wrap `ended` to log what reaches the rings.
  const ended = engine.ended.bind(engine);
  engine.ended = (endpoint, latency, outcome, at) => {
    if (outcome !== undefined) samples.push({ latency, outcome });
    ended(endpoint, latency, outcome, at);
  };
  /** What listeners threw, as `onError` hears it. */
  const reported: unknown[] = [];
  const events = new EventEmitter<ClientEvents>({ onError: (error) => reported.push(error) });
  const observer = new AdaptiveObserver(engine, clock, scheduled);
  const off = observer.observe(events);
  const base = (id: number, key = 'k1') => ({
    id,
    key,
    method: 'GET' as const,
    url: URL_A,
    priority: 'normal' as const,
  });
  // A flight ends at the clock's time, as the client ends it (NaN: its clock threw then).
  const endAt = () => (broken ? Number.NaN : now);
  return {
    engine,
    events,
    observer,
    off,
    samples,
    reported,
    at(ms: number) {
      now = ms;
    },
    breakClock(error: Error | undefined) {
      broken = error;
    },
    request(key = 'k1', endpoint = EP) {
      const tracker = new Tracker(key);
      tracker.start(now);
      events.emit('request', { key, method: 'GET', url: URL_A, tracker, endpoint, probe: false });
      return tracker;
    },
    queued: (id: number, key = 'k1') =>
      events.emit('request-queued', { ...base(id, key), position: 1 }),
    started: (id: number, key = 'k1') => events.emit('request-started', base(id, key)),
    delayed: (id: number, reason: 'backoff' | 'rate-limit' = 'backoff') =>
      events.emit('request-delayed', { ...base(id), reason, delay: 100 }),
    rejected: (id: number) => events.emit('request-rejected', { ...base(id), reason: 'cancelled' }),
    // The terminal helpers end an attempt the client made: its tracker counted it (attempt()).
    retry: (tracker: Tracker, error: ClientEvents['retry']['error'], delay = 0) =>
      attempted(tracker) &&
      events.emit('retry', {
        key: tracker.key,
        tracker,
        attempts: 1,
        delay,
        reason: 'backoff',
        error,
        endpoint: EP,
      }),
    success: (tracker: Tracker) => {
      attempted(tracker);
      tracker.succeed(endAt());
      events.emit('success', {
        key: tracker.key,
        tracker,
        response: { data: null, status: 200, statusText: 'OK', headers: new Headers() },
        endpoint: EP,
      });
    },
    /** `made: false`: the flight ended before its attempt reached fetch. */
    error: (tracker: Tracker, error: unknown, made = true) => {
      if (made) attempted(tracker);
      tracker.fail(endAt(), error);
      events.emit('error', { key: tracker.key, tracker, error, endpoint: EP });
    },
    /** `flight`: the flight's own tracker, which the client adds (internal) to the payload. */
    cancel: (tracker: Tracker, final: boolean, key = tracker.key, flight = tracker) => {
      if (final) flight.cancel(endAt());
      events.emit('cancel', {
        key,
        tracker,
        endpoint: EP,
        final,
        flight,
      } as ClientEvents['cancel']);
    },
  };
}

describe('AdaptiveObserver, transparent mode', () => {
  it('measures from `request` to `success`', () => {
    const h = harness(false);
    h.at(1000);
    const t = h.request();
    expect(h.engine.state(EP)!.signals.active).toBe(1);
    h.at(1120);
    h.success(t);
    expect(h.samples).toEqual([{ latency: 120, outcome: 'took' }]);
    expect(h.engine.state(EP)!.signals.active).toBe(0);
    expect(h.observer.size).toBe(0);
  });

  it('ends an attempt at `retry` and starts the next when the wait ends', () => {
    const h = harness(false);
    const t = h.request();
    h.at(100);
    h.retry(t, errorOf.http(429), 500);
    h.at(680);
    h.error(t, errorOf.http(503));
    expect(h.samples).toEqual([
      { latency: 100, outcome: 'rateLimited' },
      { latency: 80, outcome: 'error' },
    ]);
  });

  it('a cancelled flight is no sample, whether its owner or a joiner was the last to leave', () => {
    const h = harness(false);
    const owner = h.request('k1');
    h.cancel(owner, true);
    const other = h.request('k2');
    other.cancel(0); // the client cancels the flight's own tracker before emitting `cancel`
    // ... with the joiner's tracker in the payload, and the flight's beside it
    h.cancel(new Tracker('k2'), true, 'k2', other);
    expect(h.samples).toEqual([]);
    expect(h.observer.size).toBe(0);
    expect(h.engine.state(EP)!.signals.active).toBe(0);
  });

  it('ignores a non-final cancel and events of flights it never saw', () => {
    const h = harness(false);
    const t = h.request();
    h.cancel(t, false);
    h.success(new Tracker('k9'));
    h.at(10);
    h.success(t);
    expect(h.samples).toEqual([{ latency: 10, outcome: 'took' }]);
  });
});

describe('AdaptiveObserver, scheduler mode', () => {
  it('measures each attempt from `request-started` to its terminal event', () => {
    const h = harness(true);
    const t = h.request();
    h.queued(7);
    h.at(50);
    h.started(7);
    h.at(250);
    h.retry(t, errorOf.http(503));
    h.delayed(7);
    h.at(1000);
    h.queued(7); // back from the retry wait: already bound
    h.at(1010);
    h.started(7);
    h.at(1040);
    h.error(t, errorOf.timeout(30));
    expect(h.samples).toEqual([
      { latency: 200, outcome: 'error' },
      { latency: 30, outcome: 'error' },
    ]);
    expect(h.observer.size).toBe(0);
  });

  it('does not measure the wait before the start, nor a rate-budget park', () => {
    const h = harness(true);
    const t = h.request();
    h.queued(1);
    h.at(500);
    h.delayed(1, 'rate-limit');
    expect(h.engine.state(EP)).toBeUndefined(); // nothing measured yet
    h.at(900);
    h.started(1);
    h.at(940);
    h.success(t);
    expect(h.samples).toEqual([{ latency: 40, outcome: 'took' }]);
  });

  it('ties same-key flights to their job ids, even when one starts inside the other`s listener', () => {
    const h = harness(true);
    const a = h.request('same');
    const b = h.request('same'); // e.g. a listener on `request` fired an identical POST
    h.queued(2, 'same');
    h.queued(1, 'same');
    h.started(1, 'same');
    h.at(10);
    h.started(2, 'same');
    h.at(100);
    h.success(a);
    h.at(130);
    h.success(b);
    expect(h.samples).toEqual([
      { latency: 100, outcome: 'took' },
      { latency: 120, outcome: 'took' },
    ]);
  });

  it('a `request-started` heard after its attempt began (emitted during another delivery) is measured', () => {
    const h = harness(true);
    const t = h.request();
    h.queued(1);
    // Emitted from a listener: it waits for the delivery to end, and meanwhile fetch is called.
    h.events.on('queue-paused', () => {
      h.started(1);
      t.attempt();
    });
    h.events.emit('queue-paused', { group: 'g' });
    h.at(80);
    t.succeed(80);
    h.events.emit('success', {
      key: t.key,
      tracker: t,
      response: { data: null, status: 200, statusText: 'OK', headers: new Headers() },
      endpoint: EP,
    });
    expect(h.samples).toEqual([{ latency: 80, outcome: 'took' }]);
  });

  it('`request-rejected` ends a queued or running job without a sample', () => {
    const h = harness(true);
    h.request();
    h.queued(3);
    h.started(3);
    h.rejected(3);
    expect(h.samples).toEqual([]);
    expect(h.observer.size).toBe(0);
    expect(h.engine.state(EP)!.signals.active).toBe(0);
  });

  it('a job whose deadline ends it as it gets its slot, before fetch, is no sample', () => {
    const h = harness(true);
    const t = h.request();
    h.queued(5);
    h.at(470);
    h.started(5); // the slot is given at the very moment the deadline timer fires
    h.error(t, errorOf.timeout(470), false);
    expect(h.samples).toEqual([]);
    expect(h.engine.state(EP)!.signals.active).toBe(0);
    expect(h.observer.size).toBe(0);
  });

  it('a job refused by the circuit before it started is no sample', () => {
    const h = harness(true);
    const t = h.request();
    h.queued(4);
    h.error(t, errorOf.circuitOpen(EP));
    expect(h.samples).toEqual([]);
    expect(h.observer.size).toBe(0);
  });
});

describe('AdaptiveObserver, lifecycle', () => {
  // The clock read in a listener threw there: `onError` heard an app's listener fail, and a
  // throw in the terminal listener skipped forgetting the flight (its maps kept it).
  it('a clock that throws while it listens: no listener fails, every flight is forgotten', () => {
    const broken = new Error('clock broken');
    for (const scheduled of [false, true]) {
      const h = harness(scheduled);
      h.breakClock(broken);
      const t = h.request();
      h.queued(7);
      h.started(7);
      h.retry(t, errorOf.http(503));
      h.delayed(7);
      h.queued(7);
      h.started(7);
      h.error(t, broken);
      const u = h.request('k2');
      h.queued(8, 'k2');
      h.started(8, 'k2');
      h.success(u);
      expect(h.reported).toEqual([]);
      expect(h.observer.size).toBe(0);
      expect(h.engine.state(EP)!.signals.active).toBe(0);
    }
  });

  it('reset forgets flights in progress; unsubscribing removes every listener', () => {
    const h = harness(true);
    const t = h.request();
    h.queued(1);
    h.started(1);
    h.observer.reset();
    h.engine.reset();
    h.success(t);
    expect(h.samples).toEqual([]);
    expect(h.engine.state(EP)).toBeUndefined();
    expect(h.events.listenerCount()).toBe(9);
    h.off();
    expect(h.events.listenerCount()).toBe(0);
    expect(harness(false).events.listenerCount()).toBe(5);
  });

  it('closes windows from events: two 429 attempts make a pressured window', () => {
    const h = harness(false);
    for (let i = 0; i < 2; i++) {
      const t = h.request(`k${i}`);
      h.error(t, errorOf.http(429));
    }
    expect(h.engine.state(EP)!.reason).toMatch(/^429 share 1 >= rateLimitRatio 0.2/);
  });
});

describe('classify', () => {
  it('maps attempt errors to outcomes', () => {
    expect(classify(errorOf.http(429))).toBe('rateLimited');
    expect(classify(errorOf.http(500))).toBe('error');
    expect(classify(errorOf.http(503))).toBe('error');
    expect(classify(errorOf.http(404))).toBe('took');
    expect(classify(errorOf.http(408))).toBe('took');
    expect(classify(errorOf.timeout(10))).toBe('error');
    expect(classify(new TypeError('fetch failed'))).toBe('error');
    expect(classify(errorOf.parse(200, 'x', undefined))).toBe('took');
    expect(classify(errorOf.cancelled())).toBeUndefined();
    expect(classify(new DOMException('aborted', 'AbortError'))).toBeUndefined();
  });
});
