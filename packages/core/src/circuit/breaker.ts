import { CircuitOpenError } from '../errors/circuit-open-error';
import { type AheadEmitter, type Emitter, onEach } from '../events/emitter';
import type { Clock } from '../internal/clock';
import { endpointKey, splitEndpoint } from '../internal/endpoint';
import { evictOldest } from '../internal/evict';
import type { RequestSpec } from '../request/resolve';
import type { Tracker } from '../tracker/tracker';
import type { CircuitBreakerController, CircuitState, CircuitStatus } from '../types/controllers';
import type { ClientEvents } from '../types/events';
import { ADMIT, ADMIT_PROBE, type Admission, type CircuitGuard } from './guard';
import type { ResolvedCircuitOptions } from './options';
import { type ErrorVerdict, flightVerdict } from './outcome';

/**
 * One endpoint's circuit, one flat record (no phase object per transition). `state` changes
 * only in #move; `openedAt` and `probe` mean something only in the states that read them.
 */
interface Circuit {
  readonly endpoint: string;
  state: CircuitState;
  /**
   * When the circuit last opened: open and halfOpen (kept through halfOpen so a released probe
   * restores the same window).
   */
  openedAt: number;
  /**
   * The probe flight's tracker, which identifies its terminal event: set in halfOpen only, so a
   * circuit with a probe is half-open. Undefined between `beforeRequest` admitting the probe and
   * the synchronous `request` event that follows.
   */
  probe: Tracker | undefined;
  /** Countable failures since the last success or reset (CircuitStatus.consecutiveFailures). */
  failures: number;
  /**
   * When a probe last closed it (its flight's end; NaN before): a flight that started earlier
   * was admitted before the circuit opened, and its outcome is stale.
   */
  closedAt: number;
  /** The breaker's count of created circuits when a request last consulted this one. */
  seen: number;
}

type CircuitEventName = 'circuit-open' | 'circuit-half-open' | 'circuit-closed';

/**
 * The per-endpoint circuit breaker (`METHOD pathname` keys): the pipeline's CircuitGuard and the
 * public CircuitBreakerController.
 *
 *   closed ──(failureThreshold consecutive countable failures)──► open
 *   open ──(a request arrives ≥ resetTimeout after openedAt: it becomes the probe)──► halfOpen
 *   halfOpen ──(probe succeeds, or the endpoint answers it with a non-countable error)──► closed
 *   halfOpen ──(probe fails countably)──► open (window restarts)
 *   halfOpen ──(probe cancelled, or released before it started)──► open with the same openedAt:
 *                                                     the next request probes at once
 *
 * It learns outcomes only from lifecycle events (`observe`): a flight's terminal `success`,
 * `error`, or final `cancel`, each emitted once per flight, so retries and dedup joiners never
 * count twice. Outcomes that cannot belong to the current phase are stale and dropped: a flight
 * admitted while closed that ends after the circuit opened says nothing about the probe.
 *
 * Time comes from the injected clock only, and no timer is needed: open → halfOpen happens
 * lazily when a request arrives. There is exactly one probe per half-open phase because the
 * move to halfOpen and the admission of the probe happen in one synchronous call.
 */
export class CircuitBreaker implements CircuitGuard, CircuitBreakerController {
  readonly #circuits = new Map<string, Circuit>();
  /** Circuits created so far: the age a circuit's `seen` is measured against (#evict). */
  #created = 0;
  readonly #threshold: number;
  readonly #resetTimeout: number;
  readonly #clock: Clock;
  readonly #events: Emitter<ClientEvents>;

  constructor(options: ResolvedCircuitOptions, clock: Clock, events: Emitter<ClientEvents>) {
    this.#threshold = options.failureThreshold;
    this.#resetTimeout = options.resetTimeout;
    this.#clock = clock;
    this.#events = events;
  }

  /**
   * Subscribes to the lifecycle events that feed the breaker; returns the unsubscribe.
   *
   * `request` binds the admitted probe to its flight's tracker (emitted right after
   * `beforeRequest`) and announces `circuit-half-open` now that the probe's flight exists: a
   * same-key request made from that listener joins the probe (rule 7) rather than being refused.
   * A flight that made no attempt (its deadline ran out in a queue) never reached its endpoint.
   * A final cancel's tracker is the cancelling caller's (maybe a joiner's), so the probe is
   * recognised by its own tracker having been cancelled.
   */
  observe(events: Emitter<ClientEvents>): () => void {
    return onEach(events, {
      request: (e) => {
        const circuit = e.probe ? this.#circuits.get(e.endpoint) : undefined;
        if (circuit?.state === 'halfOpen' && circuit.probe === undefined) {
          this.#move(circuit, 'halfOpen', 'circuit-half-open', e.tracker);
        }
      },
      success: (e) => this.#settle(e.endpoint, e.tracker, 'success'),
      error: (e) =>
        this.#settle(
          e.endpoint,
          e.tracker,
          e.tracker.attempts ? flightVerdict(e.error) : 'neutral',
        ),
      cancel: (e) => {
        const circuit = e.final ? this.#circuits.get(e.endpoint) : undefined;
        if (circuit?.probe?.state === 'cancelled') {
          this.#settle(e.endpoint, circuit.probe, 'neutral');
        }
      },
    });
  }

  // ── CircuitGuard ──────────────────────────────────────────────────────────────────────────

  beforeRequest(spec: RequestSpec): Admission {
    const circuit = this.#circuits.get(spec.endpoint) ?? this.#create(spec.endpoint);
    circuit.seen = this.#created;
    if (circuit.state === 'closed') return ADMIT;
    // A probe cancelled without its event reaching us (defensive): release its slot.
    if (circuit.probe?.state === 'cancelled') this.#move(circuit, 'open');
    if (circuit.state === 'open') {
      // Open long enough, or for a time the clock cannot tell (it stepped back before openedAt,
      // or reads NaN): the request probes, rather than the circuit staying open for the step too.
      const elapsed = this.#clock.now() - circuit.openedAt;
      if (!(elapsed >= 0 && elapsed < this.#resetTimeout)) {
        // Announced by the probe's `request`, once its flight can be joined (see observe).
        this.#move(circuit, 'halfOpen');
        return ADMIT_PROBE;
      }
    }
    // The spec is its own init: its `endpoint` is the circuit's.
    return { ok: false, error: new CircuitOpenError(spec, spec) };
  }

  /**
   * The scheduler's pre-start peek for a job admitted earlier that waited: only a closed (or
   * unknown) circuit lets it start. Open or half-open means it is rejected; the probe itself
   * skips this gate.
   */
  permits(endpoint: string): boolean {
    return this.stateOf(endpoint) === 'closed';
  }

  /**
   * A probe admitted by `beforeRequest` whose flight never started (its caller's signal threw as
   * it was listened to): open again with the same openedAt, silently, as after a cancelled
   * probe, so the next request probes at once. A probe its `request` bound ends through its
   * lifecycle events instead (this changes nothing then).
   */
  release(endpoint: string): void {
    const circuit = this.#circuits.get(endpoint);
    if (circuit?.state === 'halfOpen' && circuit.probe === undefined) this.#move(circuit, 'open');
  }

  // ── CircuitBreakerController ──────────────────────────────────────────────────────────────

  status(method: string, path: string): CircuitStatus {
    const endpoint = endpointKey(method, path);
    return statusOf(this.#circuits.get(endpoint) ?? this.#create(endpoint));
  }

  statuses(): CircuitStatus[] {
    return Array.from(this.#circuits.values(), statusOf);
  }

  /**
   * Forces circuits closed with no failures: one endpoint, every endpoint of a method (path
   * omitted), or all (both omitted). No event is emitted (`circuit-closed` means a
   * probe succeeded). A probe still in flight is then an ordinary closed-state outcome.
   */
  reset(method?: string, path?: string): void {
    // endpointKey checks the arguments; `METHOD /` (empty path) prefixes every endpoint of it.
    const key = method === undefined && path === undefined ? '' : endpointKey(method, path ?? '');
    for (const circuit of this.#circuits.values()) {
      const { endpoint } = circuit;
      if (path === undefined ? endpoint.startsWith(key) : endpoint === key) {
        this.#move(circuit, 'closed');
      }
    }
  }

  // ── read-only views for the intelligence snapshot and inspect() ───────────────────────────

  /** How long a circuit stays open before a request may probe it, in ms. */
  get resetTimeout(): number {
    return this.#resetTimeout;
  }

  stateOf(endpoint: string): CircuitState {
    return this.#circuits.get(endpoint)?.state ?? 'closed';
  }

  failuresOf(endpoint: string): number {
    return this.#circuits.get(endpoint)?.failures ?? 0;
  }

  counts(): { open: number; halfOpen: number; closed: number } {
    const counts = { open: 0, halfOpen: 0, closed: 0 };
    for (const circuit of this.#circuits.values()) counts[circuit.state]++;
    return counts;
  }

  // ── outcomes ──────────────────────────────────────────────────────────────────────────────

  /**
   * A flight's end, by what it tells about its endpoint (see classifyError). Closed: a
   * countable failure extends the streak (opening at failureThreshold), only a success breaks it
   * (a 404 between two 503s is not a success). Half-open, for the probe only: a countable
   * failure opens the circuit again (a new resetTimeout window), an answer closes it, and a
   * cancelled probe gives its slot back: open with the same window, so the next request (already
   * past resetTimeout) probes at once. Any other outcome is stale (a flight admitted before the
   * circuit opened), and so is any outcome once the circuit is open.
   */
  #settle(endpoint: string, tracker: Tracker, verdict: ErrorVerdict | 'success'): void {
    const circuit = this.#circuits.get(endpoint);
    const probe = circuit?.probe === tracker;
    if (!probe && (circuit?.state !== 'closed' || tracker.startedAt < circuit.closedAt)) return;
    if (verdict === 'failure') {
      if (++circuit.failures >= this.#threshold || probe) {
        // When the flight ended, as its tracker has it (NaN: the clock could not tell, and the
        // next request probes): a listener reads no clock, which may throw or step back.
        circuit.openedAt = tracker.endedAt;
        this.#move(circuit, 'open', 'circuit-open');
      }
    } else if (verdict === 'success' || (probe && verdict === 'answered')) {
      if (probe) circuit.closedAt = tracker.endedAt;
      // Closed already, a success only clears the streak (#move is silent without `announce`).
      this.#move(circuit, 'closed', probe ? 'circuit-closed' : undefined);
    } else if (probe) this.#move(circuit, 'open');
  }

  /**
   * The one place `state` changes: closing also clears the failure count, and every move sets
   * the probe (only the `request` that binds it names one). `announce` names the event a real
   * transition emits (forced resets and a released probe are silent).
   */
  #move(circuit: Circuit, state: CircuitState, announce?: CircuitEventName, probe?: Tracker): void {
    circuit.state = state;
    circuit.probe = probe;
    if (state === 'closed') circuit.failures = 0;
    if (announce !== undefined && this.#events.has(announce)) {
      // Ahead of the event that caused it (the breaker is its first listener): every listener
      // hears the new state before the `request`, `success` or `error` it follows from.
      (this.#events as AheadEmitter<ClientEvents>).emit(
        announce,
        { endpoint: circuit.endpoint, ...splitEndpoint(circuit.endpoint) },
        true,
      );
    }
  }

  #create(endpoint: string): Circuit {
    const circuit: Circuit = {
      endpoint,
      state: 'closed',
      openedAt: 0,
      probe: undefined,
      failures: 0,
      closedAt: Number.NaN,
      seen: ++this.#created,
    };
    this.#circuits.set(endpoint, circuit);
    if (this.#circuits.size > MAX_CIRCUITS) this.#evict(circuit);
    return circuit;
  }

  /**
   * Bounds memory when paths carry ids (`/items/123`): drops the oldest circuit that is idle
   * (closed, no failures counted: indistinguishable from a new one, so only its line in
   * `statuses()` is lost) or that no request consulted while MAX_CIRCUITS others were created
   * (its state forgotten: the state of endpoints nobody calls, such as ids that each answered
   * 503 once, must not pile up forever). A half-open circuit (its probe in flight) stays. The
   * scan is bounded, so the map may exceed the cap for a while.
   */
  #evict(keep: Circuit): void {
    const stale = this.#created - MAX_CIRCUITS;
    evictOldest(
      this.#circuits,
      (c) =>
        c !== keep &&
        c.state !== 'halfOpen' &&
        ((c.state === 'closed' && c.failures === 0) || c.seen <= stale),
      EVICTION_SCAN,
    );
  }
}

/** Circuits kept at most while some are idle (see #evictIdle). */
export const MAX_CIRCUITS = 2000;
const EVICTION_SCAN = 64;

function statusOf(circuit: Circuit): CircuitStatus {
  const { state } = circuit;
  const status: CircuitStatus = {
    endpoint: circuit.endpoint,
    state,
    consecutiveFailures: circuit.failures,
    probing: state === 'halfOpen',
  };
  if (state !== 'closed') status.openedAt = circuit.openedAt;
  return status;
}
