import { type ErrorReporter, logListenerError, report } from '../internal/report';

type Listener<P> = (payload: P) => void;

/**
 * A small typed emitter. Listeners live in an array per event that is replaced on change
 * (copy-on-write), so emit iterates without copying and a listener removing itself mid-emit is safe.
 * A throwing listener does not stop the others; its error goes to `onError` (default: logged),
 * never rethrown.
 *
 * @example
 * const e = new EventEmitter<{ ping: { n: number } }>();
 * const off = e.on('ping', ({ n }) => console.log(n));
 * e.emit('ping', { n: 1 }); off();
 */
export class EventEmitter<Events extends { [K in keyof Events]: unknown }> {
  #listeners: { [K in keyof Events]?: Listener<Events[K]>[] } = {};
  readonly #onError: ErrorReporter;

  constructor(options: { onError?: ErrorReporter } = {}) {
    this.#onError = options.onError ?? logListenerError;
  }

  on<K extends keyof Events>(event: K, listener: Listener<Events[K]>): () => void {
    const list = this.#listeners[event];
    this.#listeners[event] = list ? [...list, listener] : [listener];
    // Once: a second call must not remove another registration of the same function.
    let live = true;
    return () => {
      if (live) this.off(event, listener);
      live = false;
    };
  }

  /**
   * Subscribes several listeners at once (an observer's handlers); returns one unsubscribe for
   * all of them.
   */
  onEach(handlers: { [K in keyof Events]?: Listener<Events[K]> }): () => void {
    const offs: (() => void)[] = [];
    for (const event in handlers) {
      const listener = handlers[event];
      if (listener !== undefined) offs.push(this.on(event, listener));
    }
    return () => {
      for (const off of offs) off();
    };
  }

  once<K extends keyof Events>(event: K, listener: Listener<Events[K]>): () => void {
    const wrapped: Listener<Events[K]> = (payload) => {
      this.off(event, wrapped);
      listener(payload);
    };
    return this.on(event, wrapped);
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

  listenerCount(event?: keyof Events): number {
    if (event !== undefined) return this.#listeners[event]?.length ?? 0;
    let n = 0;
    for (const k in this.#listeners) n += this.#listeners[k]?.length ?? 0;
    return n;
  }

  emit<K extends keyof Events>(event: K, payload: Events[K]): void {
    const list = this.#listeners[event];
    if (!list) return;
    for (let i = 0; i < list.length; i++) {
      try {
        list[i]!(payload);
      } catch (err) {
        report(this.#onError, err, { source: 'event', event: String(event) });
      }
    }
  }

  removeAll(): void {
    this.#listeners = {};
  }
}
