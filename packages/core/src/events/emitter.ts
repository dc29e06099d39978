import { checkFunction } from '../internal/checks';
import { callUser, type ErrorReporter, logListenerError } from '../internal/report';

type Listener<P> = (payload: P) => void;
type Listeners<Events> = { [K in keyof Events]?: Listener<Events[K]>[] };
type EmitterOptions = { onError?: ErrorReporter | undefined };

/**
 * The emitter a client runs on: EventEmitter without its conveniences (`onEach`, `once`), which
 * only apps and observers use, so an app that needs neither bundles neither.
 */
export class Emitter<Events extends { [K in keyof Events]: unknown }> {
  /** Kept as one object (EventEmitter.removeAll empties it in place). */
  readonly #listeners: Listeners<Events>;
  readonly #onError: ErrorReporter;
  /** True while an event is being delivered: an emit then only queues. */
  #delivering = false;
  /**
   * Events emitted during a delivery, as name, payload pairs in one array (one per emitter,
   * emptied after each delivery): an emit, nested or not, allocates no queue.
   */
  readonly #queue: unknown[] = [];

  /** `listeners`: the object to keep them in (EventEmitter's, which can empty it). */
  constructor(options: EmitterOptions = {}, listeners: Listeners<Events> = {}) {
    this.#listeners = listeners;
    this.#onError = options.onError ?? logListenerError;
  }

  on<K extends keyof Events>(event: K, listener: Listener<Events[K]>): () => void {
    const list = this.#listeners[event];
    this.#listeners[event] = [...(list ?? []), listener];
    // Once: a second call must not remove another registration of the same function.
    let live = true;
    return () => {
      if (live) this.off(event, listener);
      live = false;
    };
  }

  off<K extends keyof Events>(event: K, listener: Listener<Events[K]>): void {
    const list = this.#listeners[event];
    if (!list) return;
    const i = list.indexOf(listener);
    if (i === -1) return;
    if (list.length === 1) delete this.#listeners[event];
    else this.#listeners[event] = list.filter((_, j) => j !== i);
  }

  /** Cheap check so hot paths build a payload only when someone listens. */
  has(event: keyof Events): boolean {
    return this.#listeners[event] !== undefined;
  }

  /**
   * Every listener of every event (the client's `debug.listeners`); EventEmitter adds the count
   * of one event, which only apps use.
   */
  listenerCount(): number {
    let n = 0;
    // An event's list is deleted when it empties: each one here holds a listener at least.
    for (const k in this.#listeners) n += this.#listeners[k]!.length;
    return n;
  }

  /** The payload may be left out exactly for an event whose payload type admits `undefined`. */
  emit<K extends keyof Events>(
    event: K,
    ...payload: undefined extends Events[K] ? [payload?: Events[K]] : [payload: Events[K]]
  ): void;
  /**
   * `ahead` (internal: see AheadEmitter) delivers now, even during another event's delivery.
   * One method rather than two: the clients without a circuit breaker, its only user, bundle
   * one branch instead of a second method.
   */
  emit<K extends keyof Events>(event: K, payload?: Events[K], ahead?: boolean): void {
    if (this.#listeners[event] === undefined) return;
    if (this.#delivering) {
      // `=== true`: a public emitter's emit may get a third argument (forEach, bind).
      if (ahead === true) this.#deliver(event, payload as Events[K]);
      else this.#queue.push(event, payload);
      return;
    }
    this.#delivering = true;
    try {
      this.#deliver(event, payload as Events[K]);
      const queue = this.#queue;
      // The queue grows while it is drained: each event is delivered after those before it.
      for (let i = 0; i < queue.length; i += 2) {
        this.#deliver(queue[i] as keyof Events, queue[i + 1] as Events[keyof Events]);
      }
    } finally {
      this.#delivering = false;
      // Read before written: most deliveries queue nothing, and a length store costs more.
      if (this.#queue.length > 0) this.#queue.length = 0;
    }
  }

  #deliver<K extends keyof Events>(event: K, payload: Events[K]): void {
    const list = this.#listeners[event];
    if (!list) return;
    for (let i = 0; i < list.length; i++) {
      callUser(this.#onError, list[i]!, payload, 'event', event as string);
    }
  }
}

/**
 * An Emitter seen with `emit`'s third argument, `ahead`, which its public overload leaves out
 * (only the circuit breaker and `EventEmitter.emitAhead` pass it): delivers now, ahead of the
 * rest of the event being delivered (see `EventEmitter.emitAhead`); outside a delivery, the same
 * as without it.
 */
export interface AheadEmitter<Events extends { [K in keyof Events]: unknown }> {
  emit<K extends keyof Events>(event: K, payload: Events[K], ahead: true): void;
}

/**
 * A small typed emitter. Listeners live in an array per event that is replaced on change
 * (copy-on-write), so emit iterates without copying and a listener removing itself mid-emit is safe.
 * A throwing listener does not stop the others; its error goes to `onError` (default: logged),
 * never rethrown.
 *
 * One delivery order for every listener: an event emitted while another is being delivered (a
 * listener calling back into its source) waits in a FIFO queue and is delivered, to the listeners
 * subscribed then, once the one before it has reached every listener. Otherwise a later listener
 * would hear the nested event before the outer one (an end before its start).
 *
 * @example
 * const e = new EventEmitter<{ ping: { n: number } }>();
 * const off = e.on('ping', ({ n }) => console.log(n));
 * e.emit('ping', { n: 1 }); off();
 *
 * Without a type argument (`new EventEmitter()`) it takes any event name, with unknown payloads.
 */
export class EventEmitter<
  Events extends { [K in keyof Events]: unknown } = Record<string, unknown>,
> extends Emitter<Events> {
  /** Emitter's listeners object: `removeAll` lives here, out of the client's Emitter. */
  readonly #listeners: Listeners<Events>;

  constructor(options: EmitterOptions = {}) {
    const listeners: Listeners<Events> = {};
    super(options, listeners);
    this.#listeners = listeners;
  }

  /** As Emitter's, with the listener checked (the client checks its own before adding). */
  override on<K extends keyof Events>(event: K, listener: Listener<Events[K]>): () => void {
    // Added as it was, it was called by every emit, and its TypeError reported as a listener's.
    checkFunction('listener', listener);
    return super.on(event, listener);
  }

  override listenerCount(event?: keyof Events): number {
    return event === undefined ? super.listenerCount() : (this.#listeners[event]?.length ?? 0);
  }

  removeAll(): void {
    for (const event in this.#listeners) delete this.#listeners[event];
    this.#onces.clear();
  }

  /**
   * Subscribes several listeners at once (an observer's handlers); returns one unsubscribe for
   * all of them.
   */
  onEach(handlers: { [K in keyof Events]?: Listener<Events[K]> }): () => void {
    return onEach(this, handlers);
  }

  /**
   * Delivers now, ahead of the rest of the event being delivered: for an observer subscribed
   * before every other listener of that event (the circuit breaker, installed with the client)
   * announcing the state change the event caused. No other listener has heard the outer event
   * yet, so all still hear one order: `circuit-open` before the `error` that opened it. Outside
   * a delivery, the same as `emit`.
   */
  emitAhead<K extends keyof Events>(event: K, payload: Events[K]): void {
    (this as unknown as AheadEmitter<Events>).emit(event, payload, true);
  }

  /** Live `once` registrations: each wrapper, with the event and function it was added with. */
  readonly #onces = new Map<Listener<never>, [keyof Events, Listener<never>]>();

  once<K extends keyof Events>(event: K, listener: Listener<Events[K]>): () => void {
    checkFunction('listener', listener);
    const wrapped: Listener<Events[K]> = (payload) => {
      this.off(event, wrapped);
      listener(payload);
    };
    this.#onces.set(wrapped, [event, listener]);
    return this.on(event, wrapped);
  }

  /** Also removes a listener added with `once` (held wrapped) by the function it was given. */
  override off<K extends keyof Events>(event: K, listener: Listener<Events[K]>): void {
    let removed: Listener<never> = listener;
    const before = this.listenerCount(event);
    super.off(event, listener);
    if (this.listenerCount(event) === before) {
      for (const [wrapped, [e, fn]] of this.#onces) {
        if (e === event && fn === listener) {
          super.off(event, wrapped as Listener<Events[K]>);
          removed = wrapped;
          break;
        }
      }
    }
    this.#onces.delete(removed);
  }
}

/**
 * `onEach` of an emitter: the observers' (intelligence, circuit breaker, adaptive engine) way
 * to subscribe their handlers, kept out of Emitter so a client without them does not bundle it.
 */
export function onEach<Events extends { [K in keyof Events]: unknown }>(
  emitter: Emitter<Events>,
  handlers: { [K in keyof Events]?: Listener<Events[K]> },
): () => void {
  const offs: (() => void)[] = [];
  for (const event in handlers) {
    const listener = handlers[event];
    if (listener !== undefined) offs.push(emitter.on(event, listener));
  }
  return () => {
    for (const off of offs) off();
  };
}
