/**
 * The contract between the event hub and where its events live. The hub holds the clients,
 * their topics and the SSE framing; a store gives events their ids, keeps them for replay and
 * delivers every event (of every instance sharing it) to the hub, in id order.
 *
 * Two stores ship: {@link memoryStore} (one process, the default) and `redisStreams` from
 * `@keel/server/redis` (many processes on one Redis stream).
 */

/** One event as a store keeps it. */
export interface StoredEvent {
  /** The store's id: unique and ordered; sent as the SSE `id` and echoed as `Last-Event-ID`. */
  readonly id: string;
  /** The event name. */
  readonly event: string;
  /** The payload, already serialized (the SSE `data` text). */
  readonly data: string;
  /** The topic it was published to; `undefined` for a broadcast to every client. */
  readonly topic: string | undefined;
}

/** What the hub asks when a client reconnects with `Last-Event-ID`. */
export interface ReplayRequest {
  /** The client's `Last-Event-ID`, as sent (untrusted). */
  readonly after: string;
  /** The last id the hub delivered live; the replay ends there, live delivery goes on after it. */
  readonly upTo: string;
  /** Whether this client receives an event of `topic` (the store may skip the others early). */
  include(topic: string | undefined): boolean;
  /**
   * Replays whose included events' SSE frames exceed this many bytes end in a reset instead.
   * A store should stop reading there (an old id must not cost a list of everything since):
   * `frameFloor`-style bounds that never exceed a frame's bytes keep the answer exact.
   */
  readonly maxBytes: number;
}

/**
 * The answer to a replay:
 * - `events`: the events after `after` up to `upTo` (only those `include` accepts need be
 *   listed; the hub checks the bytes of what it sends too);
 * - `ahead`: `after` is a real id newer than `upTo` (the client came from an instance that had
 *   read further): the hub drops live events for which `has(id)` (ids up to `after`);
 * - `reset`: it cannot be told exactly (the id is unknown, from another epoch or stream, older
 *   than what is kept, or the replay is over `maxBytes`).
 */
export type ReplayResult =
  | { readonly kind: 'events'; readonly events: readonly StoredEvent[] }
  | { readonly kind: 'ahead'; has(id: string): boolean }
  | { readonly kind: 'reset' };

/** How a store hands events to its hub. */
export interface StoreSink {
  /** Every event, of every instance sharing the store, once, in id order. */
  deliver(event: StoredEvent): void;
  /**
   * The store lost events it should have delivered (e.g. they were trimmed while it could not
   * read): every client gets `keel:reset`, and delivery goes on after `head`.
   */
  reset(head: string): void;
}

/** A place for the hub's events. See {@link memoryStore} for the reference implementation. */
export interface HubStore {
  /**
   * Starts delivery to `sink`; returns (or resolves to) the id delivery starts after: the newest
   * id the store already holds, or an id that means "nothing yet" (a non-empty string). Called
   * once. A rejection (or no id) fails the hub for good: `hub.ready` rejects, clients are ended,
   * publishes refused.
   */
  open(sink: StoreSink): string | Promise<string>;
  /**
   * Stores an event and returns (or resolves to) its id. Rejects when the event cannot be stored;
   * the hub wraps the reason in a `HubPublishError`. Delivery comes through the sink.
   */
  append(event: string, data: string, topic: string | undefined): string | Promise<string>;
  /** Events a reconnecting client missed; see {@link ReplayRequest}. */
  replay(request: ReplayRequest): ReplayResult | Promise<ReplayResult>;
  /**
   * Optional: the answer to `request` when the store has it without I/O (e.g. from its recent
   * events in memory), else `undefined`. Asked while every replay slot of the hub is taken (see
   * `maxConcurrentReplays`), so such a client is answered at once instead of waiting its turn.
   */
  replayAtOnce?(request: ReplayRequest): ReplayResult | undefined;
  /** Stops delivery and releases connections. */
  close(): void | Promise<void>;
}
