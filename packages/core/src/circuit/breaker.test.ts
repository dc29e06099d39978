import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CircuitOpenError } from '../errors/circuit-open-error';
import { errorOf } from '../errors/errors.fixture';
import { NetworkError } from '../errors/network-error';
import { EventEmitter } from '../events/emitter';
import type { RequestSpec } from '../request/resolve';
import { Tracker } from '../tracker/tracker';
import type { ClientEventName, ClientEvents } from '../types/events';
import { CircuitBreaker, MAX_CIRCUITS } from './breaker';
import { resolveCircuitOptions } from './options';

/**
 * The breaker alone, fed synthetic lifecycle events the way the client emits them: `request`
 * right after an admission, then one terminal `success` / `error` / final `cancel` per flight.
 */
function setup(failureThreshold = 3, resetTimeout = 1000) {
  const clock = new ManualClock();
  const events = new EventEmitter<ClientEvents>();
  const breaker = new CircuitBreaker(
    resolveCircuitOptions({ failureThreshold, resetTimeout }),
    clock,
    events,
  );
  const off = breaker.observe(events);
  const announced: { name: ClientEventName; endpoint: string }[] = [];
  for (const name of ['circuit-open', 'circuit-half-open', 'circuit-closed'] as const) {
    events.on(name, (e) => announced.push({ name, endpoint: e.endpoint }));
  }

  /** One flight: admitted or not; if admitted, its tracker and its terminal outcomes. */
  function start(path = '/a', method = 'GET') {
    const spec = { method, path, endpoint: `${method} ${path}`, key: `${method} ${path}` };
    const admission = breaker.beforeRequest(spec as RequestSpec);
    if (!admission.ok) return { admitted: false as const, error: admission.error };
    const tracker = new Tracker(spec.key);
    tracker.start(clock.now());
    // Its first attempt, as the client counts it (a flight that made none is neutral).
    tracker.attempt();
    events.emit('request', {
      key: spec.key,
      method: method as 'GET',
      url: `http://x${path}`,
      tracker,
      endpoint: spec.endpoint,
      probe: admission.probe,
    });
    const base = { key: spec.key, tracker, endpoint: spec.endpoint };
    return {
      admitted: true as const,
      probe: admission.probe,
      tracker,
      succeed() {
        tracker.succeed(clock.now());
        events.emit('success', { ...base, response: {} as never });
      },
      fail(error: unknown) {
        tracker.fail(clock.now(), error);
        events.emit('error', { ...base, error });
      },
      cancel() {
        tracker.cancel(clock.now());
        events.emit('cancel', { ...base, final: true });
      },
    };
  }

  function trip(path = '/a') {
    for (let i = 0; i < failureThreshold; i++) {
      const f = start(path);
      if (!f.admitted) throw new Error('not admitted while tripping');
      f.fail(errorOf.http(503));
    }
  }

  return { clock, events, breaker, start, trip, announced, off };
}

const e503 = () => errorOf.http(503);

/** The breaker reads only `now()` (it needs no timer), so time is a plain number here. */
class ManualClock {
  #now = 1_700_000_000_000;
  now = () => this.#now;
  setTimeout = (): never => {
    throw new Error('the breaker must not set timers');
  };
  clearTimeout = (): void => {};
  advance(ms: number): void {
    this.#now += ms;
  }
}

describe('CircuitBreaker state table', () => {
  it('closed + success resets the counter', () => {
    const t = setup();
    for (let i = 0; i < 2; i++) {
      const f = t.start();
      if (f.admitted) f.fail(e503());
    }
    expect(t.breaker.status('GET', '/a').consecutiveFailures).toBe(2);
    const ok = t.start();
    if (ok.admitted) ok.succeed();
    expect(t.breaker.status('GET', '/a')).toMatchObject({
      state: 'closed',
      consecutiveFailures: 0,
    });
  });

  it('closed + threshold reached: open with openedAt = now, circuit-open once', () => {
    const t = setup();
    t.clock.advance(42);
    t.trip();
    expect(t.breaker.status('GET', '/a')).toEqual({
      endpoint: 'GET /a',
      state: 'open',
      consecutiveFailures: 3,
      openedAt: t.clock.now(),
      probing: false,
    });
    expect(t.announced).toEqual([{ name: 'circuit-open', endpoint: 'GET /a' }]);
  });

  it("opens at the failed flight's end as its tracker has it: the listener reads no clock", () => {
    const t = setup(1);
    const f = t.start();
    if (!f.admitted) throw new Error('not admitted');
    const endedAt = t.clock.now() - 5;
    f.tracker.fail(endedAt, e503());
    // An injected clock that throws (or steps): the `error` listener must not read it.
    t.clock.now = () => {
      throw new Error('clock broken');
    };
    t.events.emit('error', {
      key: 'GET /a',
      tracker: f.tracker,
      endpoint: 'GET /a',
      error: e503(),
    });
    expect(t.breaker.status('GET', '/a')).toMatchObject({ state: 'open', openedAt: endedAt });
    expect(t.announced).toEqual([{ name: 'circuit-open', endpoint: 'GET /a' }]);
  });

  it('open + before resetTimeout: rejected with CircuitOpenError naming the endpoint', () => {
    const t = setup();
    t.trip();
    t.clock.advance(999);
    const f = t.start();
    expect(f.admitted).toBe(false);
    expect(!f.admitted && f.error).toBeInstanceOf(CircuitOpenError);
    expect(!f.admitted && f.error.endpoint).toBe('GET /a');
    expect(t.breaker.status('GET', '/a').state).toBe('open');
  });

  it('open + resetTimeout elapsed: the request is admitted as the probe, circuit-half-open', () => {
    const t = setup();
    t.trip();
    t.clock.advance(1000);
    const f = t.start();
    expect(f.admitted && f.probe).toBe(true);
    expect(t.breaker.status('GET', '/a')).toMatchObject({ state: 'halfOpen', probing: true });
    expect(t.announced.at(-1)).toEqual({ name: 'circuit-half-open', endpoint: 'GET /a' });
  });

  it('halfOpen + probe success: closed, circuit-closed', () => {
    const t = setup();
    t.trip();
    t.clock.advance(1000);
    const f = t.start();
    if (f.admitted) f.succeed();
    expect(t.breaker.status('GET', '/a')).toEqual({
      endpoint: 'GET /a',
      state: 'closed',
      consecutiveFailures: 0,
      probing: false,
    });
    expect(t.announced.map((a) => a.name)).toEqual([
      'circuit-open',
      'circuit-half-open',
      'circuit-closed',
    ]);
  });

  it('halfOpen + countable probe failure: open, window restarts, circuit-open', () => {
    const t = setup();
    t.trip();
    t.clock.advance(1234);
    const f = t.start();
    if (f.admitted) f.fail(errorOf.timeout(10));
    expect(t.breaker.status('GET', '/a')).toMatchObject({
      state: 'open',
      openedAt: t.clock.now(),
      consecutiveFailures: 4,
    });
    t.clock.advance(999);
    expect(t.start().admitted).toBe(false);
    t.clock.advance(1);
    expect(t.start().admitted).toBe(true);
  });

  it('halfOpen + another request while probing: rejected', () => {
    const t = setup();
    t.trip();
    t.clock.advance(1000);
    const probe = t.start();
    expect(probe.admitted).toBe(true);
    t.clock.advance(60_000);
    expect(t.start().admitted).toBe(false);
  });

  it('reset(method, path) / reset(method) / reset(): forced closed, no event', () => {
    const t = setup();
    t.trip('/a');
    t.trip('/b');
    t.breaker.reset('GET', '/a');
    expect(t.breaker.status('GET', '/a').state).toBe('closed');
    expect(t.breaker.status('GET', '/b').state).toBe('open');
    t.breaker.reset('POST');
    expect(t.breaker.status('GET', '/b').state).toBe('open');
    t.breaker.reset('get');
    expect(t.breaker.status('GET', '/b').state).toBe('closed');
    t.trip('/a');
    t.breaker.reset();
    expect(t.breaker.statuses().every((s) => s.state === 'closed')).toBe(true);
    expect(t.announced.filter((a) => a.name === 'circuit-closed')).toEqual([]);
    t.breaker.reset('GET', '/never-seen');
    expect(t.breaker.statuses().map((s) => s.endpoint)).toEqual(['GET /a', 'GET /b']);
  });
});

describe('CircuitBreaker rules', () => {
  it('rule 1: one probe among many requests racing the open -> halfOpen move', () => {
    const t = setup();
    t.trip();
    t.clock.advance(1000);
    const admitted = Array.from({ length: 100 }, () => t.start()).filter((f) => f.admitted);
    expect(admitted).toHaveLength(1);
  });

  it('rule 2: classification of terminal errors', () => {
    const countable = [
      errorOf.http(500),
      errorOf.http(503),
      errorOf.http(429),
      errorOf.timeout(5),
      // What the client makes of a fetch that rejects with `TypeError('fetch failed')`.
      new NetworkError(
        { method: 'GET', url: 'http://x/a' },
        { cause: new TypeError('fetch failed') },
      ),
      errorOf.http(),
    ];
    for (const error of countable) {
      const t = setup(1);
      const f = t.start();
      if (f.admitted) f.fail(error);
      expect(t.breaker.status('GET', '/a').state, String(error)).toBe('open');
    }
    const notCountable = [
      errorOf.http(400),
      errorOf.http(404),
      errorOf.http(408),
      errorOf.parse(200, 'x', undefined),
      errorOf.cancelled(),
      new DOMException('aborted', 'AbortError'),
      errorOf.circuitOpen('GET /a'),
      // Not one of keel's errors: thrown by the app's own `retryOn`, it says nothing of the server.
      new TypeError('retryOn bug'),
    ];
    for (const error of notCountable) {
      const t = setup(1);
      const f = t.start();
      if (f.admitted) f.fail(error);
      expect(t.breaker.status('GET', '/a').state, String(error)).toBe('closed');
    }
  });

  it('rule 4: endpoints are independent', () => {
    const t = setup();
    t.trip('/a');
    expect(t.start('/b').admitted).toBe(true);
    expect(t.start('/a', 'POST').admitted).toBe(true);
    expect(t.start('/a').admitted).toBe(false);
  });

  it('rule 5: permits() admits only a closed (or unknown) circuit and changes no state', () => {
    const t = setup();
    expect(t.breaker.permits('GET /unknown')).toBe(true);
    expect(t.breaker.statuses()).toEqual([]);
    t.trip();
    expect(t.breaker.permits('GET /a')).toBe(false);
    t.clock.advance(5000);
    // Past resetTimeout a peek still does not move to halfOpen: only a real request probes.
    expect(t.breaker.permits('GET /a')).toBe(false);
    expect(t.breaker.status('GET', '/a').state).toBe('open');
    const probe = t.start();
    expect(probe.admitted && probe.probe).toBe(true);
    expect(t.breaker.permits('GET /a')).toBe(false);
    if (probe.admitted) probe.succeed();
    expect(t.breaker.permits('GET /a')).toBe(true);
  });

  it('stale outcomes: flights admitted while closed that end while open or halfOpen change nothing', () => {
    const t = setup();
    const early = [t.start(), t.start()];
    t.trip();
    t.clock.advance(1000);
    const probe = t.start();
    // The old flights end while the probe is in flight: neither closes nor reopens the circuit.
    if (early[0]!.admitted) early[0]!.succeed();
    if (early[1]!.admitted) early[1]!.fail(e503());
    expect(t.breaker.status('GET', '/a')).toMatchObject({ state: 'halfOpen', probing: true });
    if (probe.admitted) probe.succeed();
    expect(t.breaker.status('GET', '/a').state).toBe('closed');
  });

  it('a cancelled probe releases the slot without an event; the next request probes at once', () => {
    const t = setup();
    t.trip();
    const openedAt = t.breaker.status('GET', '/a').openedAt;
    t.clock.advance(1000);
    const probe = t.start();
    if (probe.admitted) probe.cancel();
    expect(t.breaker.status('GET', '/a')).toMatchObject({ state: 'open', openedAt });
    expect(t.announced.map((a) => a.name)).toEqual(['circuit-open', 'circuit-half-open']);
    const next = t.start();
    expect(next.admitted && next.probe).toBe(true);
  });

  it('release: a probe admitted but never started gives its slot back, silently; a bound probe keeps it', () => {
    const t = setup();
    t.trip();
    const openedAt = t.breaker.status('GET', '/a').openedAt;
    t.clock.advance(1000);
    const spec = { method: 'GET', path: '/a', endpoint: 'GET /a', key: 'GET /a' } as RequestSpec;
    expect(t.breaker.beforeRequest(spec)).toMatchObject({ ok: true, probe: true });
    // Until released (or bound by its `request`), the slot is taken.
    expect(t.breaker.beforeRequest(spec).ok).toBe(false);
    t.breaker.release('GET /a');
    expect(t.breaker.status('GET', '/a')).toMatchObject({
      state: 'open',
      openedAt,
      probing: false,
    });
    expect(t.announced.map((a) => a.name)).toEqual(['circuit-open']);
    // A probe its `request` bound is not released: it ends through its events.
    const probe = t.start();
    expect(probe.admitted && probe.probe).toBe(true);
    t.breaker.release('GET /a');
    expect(t.breaker.status('GET', '/a').state).toBe('halfOpen');
    // Nor is a closed or unknown circuit touched.
    if (probe.admitted) probe.succeed();
    t.breaker.release('GET /a');
    t.breaker.release('GET /unknown');
    expect(t.breaker.statuses().map((s) => s.state)).toEqual(['closed']);
  });

  it('a probe ended by an abort error also releases the slot', () => {
    const t = setup();
    t.trip();
    t.clock.advance(1000);
    const probe = t.start();
    if (probe.admitted) probe.fail(errorOf.cancelled());
    expect(t.breaker.status('GET', '/a').state).toBe('open');
    expect(t.start().admitted).toBe(true);
  });

  it('resetTimeout 0: the very next request probes', () => {
    const t = setup(1, 0);
    t.trip();
    expect(t.breaker.status('GET', '/a').state).toBe('open');
    const f = t.start();
    expect(f.admitted && f.probe).toBe(true);
  });

  it('a clock stepping back does not keep a circuit open for the step as well', () => {
    const t = setup(1, 1000);
    t.trip();
    // An NTP correction sets the wall clock back an hour: openedAt now looks like the future.
    t.clock.advance(-3_600_000);
    const f = t.start();
    // How long it has been open is unknown: one request probes (it was refused for 1 h 1 s).
    expect(f.admitted && f.probe).toBe(true);
    if (f.admitted) f.fail(e503());
    // Reopened on the clock as it now reads: the next probe comes resetTimeout later.
    expect(t.breaker.status('GET', '/a').openedAt).toBe(t.clock.now());
    t.clock.advance(999);
    expect(t.start().admitted).toBe(false);
    t.clock.advance(1);
    const g = t.start();
    expect(g.admitted && g.probe).toBe(true);
  });

  it('a probe that never answers keeps its circuit half-open, however long (README)', () => {
    const t = setup(1, 1000);
    t.trip();
    t.clock.advance(1000);
    const probe = t.start();
    expect(probe.admitted && probe.probe).toBe(true);
    t.clock.advance(3_600_000);
    expect(t.start().admitted).toBe(false);
    expect(t.breaker.status('GET', '/a')).toMatchObject({ state: 'halfOpen', probing: true });
  });

  it('unsubscribing stops learning', () => {
    const t = setup(1);
    t.off();
    const f = t.start();
    if (f.admitted) f.fail(e503());
    expect(t.breaker.status('GET', '/a').state).toBe('closed');
    expect(t.events.listenerCount('error')).toBe(0);
  });
});

describe('CircuitBreaker properties', () => {
  type Op =
    | { op: 'start'; path: '/a' | '/b' }
    | { op: 'end'; pick: number; how: 'ok' | 503 | 429 | 404 | 'timeout' | 'net' | 'cancel' }
    | { op: 'wait'; ms: number };

  const opArb = (hows: ReadonlyArray<'ok' | 503 | 429 | 404 | 'timeout' | 'net' | 'cancel'>) =>
    fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record({
          op: fc.constant('start' as const),
          path: fc.constantFrom('/a' as const, '/b' as const),
        }),
      },
      {
        weight: 3,
        arbitrary: fc.record({
          op: fc.constant('end' as const),
          pick: fc.nat(),
          how: fc.constantFrom(...hows),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          op: fc.constant('wait' as const),
          ms: fc.integer({ min: 0, max: 1500 }),
        }),
      },
    );
  // Long histories: the interesting states (open, then halfOpen with racing starts) need many steps.
  const history = { minLength: 20, maxLength: 150, size: 'max' } as const;

  function errorFor(how: Exclude<Op & { op: 'end' }, never>['how']): unknown {
    switch (how) {
      case 503:
      case 429:
      case 404:
        return errorOf.http(how);
      case 'timeout':
        return errorOf.timeout(1);
      case 'net':
        return new TypeError('fetch failed');
      default:
        return undefined;
    }
  }

  function run(
    ops: Op[],
    threshold: number,
    check: (t: ReturnType<typeof setup>, live: Live[]) => void,
  ) {
    const t = setup(threshold, 1000);
    const live: Live[] = [];
    for (const o of ops) {
      if (o.op === 'start') {
        const f = t.start(o.path);
        if (f.admitted) live.push({ path: o.path, probe: f.probe, flight: f });
      } else if (o.op === 'end') {
        if (live.length === 0) continue;
        const [l] = live.splice(o.pick % live.length, 1);
        if (o.how === 'ok') l!.flight.succeed();
        else if (o.how === 'cancel') l!.flight.cancel();
        else l!.flight.fail(errorFor(o.how));
      } else {
        t.clock.advance(o.ms);
      }
      check(t, live);
    }
  }

  interface Live {
    path: string;
    probe: boolean;
    flight: { succeed(): void; fail(e: unknown): void; cancel(): void };
  }

  it('never admits a second concurrent probe per endpoint', () => {
    fc.assert(
      fc.property(
        fc.array(opArb(['ok', 503, 429, 404, 'timeout', 'net', 'cancel']), history),
        fc.integer({ min: 1, max: 4 }),
        (ops, threshold) => {
          run(ops, threshold, (t, live) => {
            for (const path of ['/a', '/b']) {
              const probes = live.filter((l) => l.path === path && l.probe).length;
              expect(probes).toBeLessThanOrEqual(1);
              // A live probe means the circuit is halfOpen; halfOpen means a live probe.
              expect(probes === 1).toBe(t.breaker.status('GET', path).state === 'halfOpen');
            }
          });
        },
      ),
      { numRuns: 300 },
    );
  }, 30_000);

  it('never opens on non-countable outcomes', () => {
    fc.assert(
      fc.property(
        fc.array(opArb(['ok', 404, 'cancel']), history),
        fc.integer({ min: 1, max: 3 }),
        (ops, threshold) => {
          run(ops, threshold, (t, live) => {
            expect(t.announced).toEqual([]);
            expect(t.breaker.statuses().every((s) => s.state === 'closed')).toBe(true);
            expect(live.every((l) => !l.probe)).toBe(true);
          });
        },
      ),
      { numRuns: 200 },
    );
  }, 30_000);

  it('opens exactly when threshold consecutive countable failures end while closed', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom<'ok' | 503 | 404 | 'cancel'>('ok', 503, 404, 'cancel'), {
          maxLength: 40,
          size: 'max',
        }),
        fc.integer({ min: 1, max: 5 }),
        (outcomes, threshold) => {
          const t = setup(threshold, 1000);
          let streak = 0;
          for (const how of outcomes) {
            const f = t.start();
            if (!f.admitted) return; // opened: the model below already checked the moment
            if (how === 'ok') f.succeed();
            else if (how === 'cancel') f.cancel();
            else f.fail(errorOf.http(how));
            if (how === 'ok') streak = 0;
            else if (how === 503) streak++;
            expect(t.breaker.status('GET', '/a').state).toBe(
              streak >= threshold ? 'open' : 'closed',
            );
          }
        },
      ),
      { numRuns: 200 },
    );
  }, 30_000);
});

describe('circuit records are bounded', () => {
  it('drops idle circuits past MAX_CIRCUITS and keeps every circuit with state in use', () => {
    const { breaker, start, trip } = setup();
    trip('/down');
    const failing = start('/failing');
    if (failing.admitted) failing.fail(errorOf.http(500));
    for (let i = 0; i < MAX_CIRCUITS + 300; i++) {
      const f = start(`/items/${i}`);
      if (f.admitted) f.succeed();
      if (i % 1000 === 0) {
        // Consulted by a request (refused; answered 404: the streak stays): in use.
        expect(start('/down').admitted).toBe(false);
        const again = start('/failing');
        if (again.admitted) again.fail(errorOf.http(404));
      }
    }
    const all = breaker.statuses();
    expect(all.length).toBeLessThanOrEqual(MAX_CIRCUITS);
    expect(all.find((c) => c.endpoint === 'GET /down')?.state).toBe('open');
    expect(all.find((c) => c.endpoint === 'GET /failing')?.consecutiveFailures).toBe(1);
    expect(all.some((c) => c.endpoint === 'GET /items/0')).toBe(false);
    expect(start('/down').admitted).toBe(false);
  });

  it('drops a circuit with state too once unused while MAX_CIRCUITS others came', () => {
    // Every id answers 503 once: each circuit keeps a failure (or is open), so none is idle.
    const { breaker, clock, start, trip } = setup(3, 1000);
    trip('/probing');
    clock.advance(1000);
    trip('/down');
    const probe = start('/probing');
    expect(probe.admitted && probe.probe).toBe(true);
    for (let i = 0; i < MAX_CIRCUITS * 3; i++) {
      const f = start(`/items/${i}`);
      if (f.admitted) f.fail(e503());
      // A circuit in use keeps its state, however many endpoints come.
      if (i % 500 === 0) expect(start('/down').admitted).toBe(false);
    }
    const all = breaker.statuses();
    // The last MAX_CIRCUITS ids are too young to go, and each scan is bounded: a few more stay
    // (6,002 were kept before).
    expect(all.length).toBeLessThan(MAX_CIRCUITS + 100);
    expect(all.find((c) => c.endpoint === 'GET /down')?.state).toBe('open');
    // A probe in flight is never dropped: its outcome still decides.
    expect(all.find((c) => c.endpoint === 'GET /probing')?.state).toBe('halfOpen');
    if (probe.admitted) probe.succeed();
    expect(breaker.status('GET', '/probing').state).toBe('closed');
    // The newest ids kept their failure; the oldest were forgotten (a fresh circuit is closed).
    expect(breaker.status('GET', `/items/${MAX_CIRCUITS * 3 - 1}`).consecutiveFailures).toBe(1);
    expect(all.some((c) => c.endpoint === 'GET /items/0')).toBe(false);
  });
});
