import {
  type Client,
  type ClientEvents,
  type ClientInspector,
  type FlightView,
  inspect,
  type Tracker,
} from '@keel/core';
import { describeError } from '../format';

/** Where a recorded flight is, or how it ended. */
export type FlightState =
  | 'queued'
  | 'active'
  | 'retrying'
  | 'parked'
  | 'done'
  | 'failed'
  | 'cancelled'
  | 'refused';

/** A stretch of a flight's life on the time axis; `to` is undefined while it lasts. */
export interface Segment {
  readonly kind: 'queued' | 'attempt' | 'retry-wait' | 'rate-wait';
  readonly from: number;
  to: number | undefined;
  /** How an attempt ended. */
  outcome?: 'done' | 'failed';
}

/** One flight as the Requests view draws it. */
export interface FlightRecord {
  /** The recorder's own number (a refusal has no flight id). */
  readonly seq: number;
  /** The client's flight id (its scheduler events' `id`), once known. */
  id: number | undefined;
  readonly key: string;
  readonly endpoint: string;
  readonly tracker: Tracker | undefined;
  readonly startedAt: number;
  endedAt: number | undefined;
  state: FlightState;
  /** Requests that joined this flight instead of sending their own (dedup). */
  joins: number;
  readonly segments: Segment[];
  /** The retry wait in progress, or the last one. */
  retry:
    | {
        readonly reason: 'backoff' | 'retry-after';
        readonly delay: number;
        readonly until: number;
        /** What the failed attempt got. */
        readonly cause: string;
        /** The attempt that failed. */
        readonly attempt: number;
      }
    | undefined;
  /** How it ended (`HTTP 200`, `HTTP 503`, `timeout (attempt)`, ...). */
  outcome: string | undefined;
  readonly probe: boolean;
}

const LIVE: Record<FlightState, boolean> = {
  queued: true,
  active: true,
  retrying: true,
  parked: true,
  done: false,
  failed: false,
  cancelled: false,
  refused: false,
};

export function isLive(record: FlightRecord): boolean {
  return LIVE[record.state];
}

/** Its flight was cancelled, though the record may not know yet (see FlightRecorder#cancelled). */
function isCancelled(record: FlightRecord): boolean {
  return record.tracker?.state === 'cancelled';
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The outcome of a flight that succeeded while the recorder was stopped. */
const HIDDEN_SUCCESS = 'succeeded while the panel was hidden (HTTP status not seen)';

/** A flight's phase as a record's state and the segment it draws. */
const PHASE: Record<FlightView['phase']['state'], { state: FlightState; kind: Segment['kind'] }> = {
  queued: { state: 'queued', kind: 'queued' },
  active: { state: 'active', kind: 'attempt' },
  'retry-wait': { state: 'retrying', kind: 'retry-wait' },
  'rate-wait': { state: 'parked', kind: 'rate-wait' },
};

/**
 * Segments a record keeps: a flight retrying hundreds of times keeps its last ones (the view
 * draws every segment on every refresh). Half go at once, so dropping is amortized O(1).
 */
const MAX_SEGMENTS = 100;

function addSegment(record: FlightRecord, segment: Segment): void {
  const { segments } = record;
  if (segments.push(segment) > MAX_SEGMENTS) segments.splice(0, MAX_SEGMENTS >> 1);
}

/** A flight's retry wait as a record's `retry`; what its attempt got is not known. */
function retryOf({ phase, attempts }: FlightView): FlightRecord['retry'] {
  if (phase.state !== 'retry-wait') return undefined;
  const { reason, delay, until } = phase;
  return { reason, delay, until, cause: 'a failed attempt', attempt: attempts };
}

/** A key's live records, oldest first, and how many of them have ended since (see #unlive). */
interface LiveList {
  records: FlightRecord[];
  ended: number;
}

/**
 * The Requests view's memory: one record per flight, built from the client's lifecycle and
 * scheduler events while the panel is open (it subscribes in `start` and lets go in `stop`),
 * seeded with the flights already in progress (`inspect(client).flights()`).
 *
 * Events name a flight in three ways, and each is resolved exactly:
 * - `request`, `retry`, `success`, `error` carry the flight's own tracker;
 * - scheduler events carry the flight id; `request-queued` follows its `request` synchronously,
 *   so the first one for an id binds it to the newest record of that key without an id;
 * - `cancel {final}` carries the caller's tracker: the flight's own when its owner ended it;
 *   when its last joiner did, the joiner's, and the flight is the key's live record whose
 *   tracker is `cancelled` (it is, before the event is emitted): the newest is looked at at
 *   once, any other waits for a sweep of its key (#cancelled); `dedup` names the key, whose
 *   joinable flight is the newest live read of it.
 *
 * Without a scheduler no event marks the end of a retry wait: the wait is known to end at
 * `until`, and the next attempt is drawn from then (`#advance`).
 */
export class FlightRecorder {
  readonly #client: Client;
  readonly #inspector: ClientInspector;
  readonly #max: number;
  #records: FlightRecord[] = [];
  readonly #byTracker = new Map<Tracker, FlightRecord>();
  readonly #byId = new Map<number, FlightRecord>();
  /** The live records of each key, oldest first (a cancel or a dedup join looks up its key). */
  readonly #liveByKey = new Map<string, LiveList>();
  /**
   * Per key, the flights ended by a joiner's cancel and not found yet: live records whose
   * tracker is cancelled, which a sweep of the key ends (#cancelled).
   */
  readonly #unfound = new Map<string, number>();
  /** Ended records in #records: what #trim may drop. */
  #ended = 0;
  /** Replaced, not changed, on (un)subscribe: a tell walks the array it started with. */
  #listeners: readonly (() => void)[] = [];
  #seq = 0;
  #scheduled = false;
  #stops: (() => void)[] = [];
  /** When it was last stopped, and the attempts each live flight had made by then (see #resume). */
  #stoppedAt = 0;
  readonly #seen = new Map<FlightRecord, number>();
  /**
   * Records looked at to trim and to find a flight among its key's, for tests that check the
   * work grows linearly with flights.
   */
  visited = 0;

  constructor(client: Client, max = 100) {
    this.#client = client;
    this.#inspector = inspect(client);
    this.#max = max;
  }

  /** Seeds with the flights in progress and starts listening. */
  start(): void {
    if (this.#stops.length > 0) return;
    this.#scheduled = this.#inspector.scheduler().enabled;
    // Started again (an <Activity> hid the panel, then showed it): what ended meanwhile ends, when
    // it did (a live record would otherwise stay in flight for good), and what goes on is drawn
    // where it is now (#resume). What it did unseen (attempts, waits) is a gap on its track.
    for (const record of this.#records) {
      const { tracker } = record;
      if (!isLive(record) || !tracker?.settled) continue;
      // Attempts unseen: the one seen (or its wait) ended before them.
      if (tracker.attempts > (this.#seen.get(record) ?? tracker.attempts))
        this.#close(record, this.#endOf(record, undefined, false, tracker.endedAt), 'failed');
      this.#settle(record);
    }
    for (const flight of this.#inspector.flights()) this.#seed(flight);
    this.#seen.clear();
    const on = <E extends keyof ClientEvents>(name: E, fn: (p: ClientEvents[E]) => void) =>
      this.#stops.push(
        this.#client.on(name, (payload) => {
          fn(payload);
          this.#changed();
        }),
      );
    on('request', (p) => this.#request(p));
    on('retry', (p) => this.#retry(p));
    on('success', (p) =>
      this.#end(this.#byTracker.get(p.tracker), 'done', `HTTP ${p.response.status}`),
    );
    on('error', (p) => this.#end(this.#byTracker.get(p.tracker), 'failed', describeError(p.error)));
    on('cancel', (p) => {
      if (p.final) this.#cancelled(p);
    });
    on('dedup', (p) => {
      const record = this.#joinable(p.key);
      if (record !== undefined) record.joins++;
    });
    on('circuit-rejected', (p) => this.#refused(p.endpoint));
    on('request-queued', (p) => this.#queued(p.id, p.key));
    on('request-started', (p) => this.#started(p.id));
    on('request-delayed', (p) => {
      if (p.reason !== 'rate-limit') return; // a retry wait: the `retry` event drew it
      const record = this.#byId.get(p.id);
      if (record === undefined) return;
      this.#open(record, 'rate-wait');
      record.state = 'parked';
    });
    // The views rendered before the seed: they read again.
    this.#changed();
  }

  stop(): void {
    if (this.#stops.length === 0) return;
    for (const stop of this.#stops.splice(0)) stop();
    this.#stoppedAt = this.#inspector.now();
    for (const record of this.#records)
      if (isLive(record)) this.#seen.set(record, record.tracker?.attempts ?? 0);
  }

  /** The records, oldest first, as of now. */
  records(): readonly FlightRecord[] {
    const now = this.#inspector.now();
    // The pass a view's read makes anyway ends the flights cancelled and not found yet.
    for (const record of this.#records) {
      if (!isLive(record)) continue;
      if (isCancelled(record)) this.#settle(record);
      else this.#advance(record, now);
    }
    this.#unfound.clear();
    this.#trim(0);
    return this.#records;
  }

  /** Drops the flights that ended. */
  clear(): void {
    this.#records = this.#records.filter((record) => isLive(record) || this.#forget(record));
    this.#ended = 0;
    this.#changed();
  }

  /** Calls `listener` when the records changed; returns the unsubscribe. */
  subscribe = (listener: () => void): (() => void) => {
    if (!this.#listeners.includes(listener)) this.#listeners = [...this.#listeners, listener];
    return () => {
      this.#listeners = this.#listeners.filter((l) => l !== listener);
    };
  };

  // ── events ──────────────────────────────────────────────────────────────────────────────────

  #request(p: ClientEvents['request']): void {
    const now = this.#inspector.now();
    const queued = this.#scheduled;
    this.#add({
      id: undefined,
      key: p.key,
      endpoint: p.endpoint,
      tracker: p.tracker,
      startedAt: p.tracker.startedAt || now,
      state: queued ? 'queued' : 'active',
      segments: [{ kind: queued ? 'queued' : 'attempt', from: now, to: undefined }],
      probe: p.probe,
    });
  }

  #retry(p: ClientEvents['retry']): void {
    const record = this.#byTracker.get(p.tracker);
    if (record === undefined) return;
    const now = this.#inspector.now();
    this.#open(record, 'retry-wait', 'failed');
    record.state = 'retrying';
    record.retry = {
      reason: p.reason,
      delay: p.delay,
      until: now + p.delay,
      cause: describeError(p.error),
      attempt: p.attempts,
    };
  }

  #queued(id: number, key: string): void {
    let record = this.#byId.get(id);
    if (record === undefined) {
      // Its `request` was the last event for this key: the newest record of it without an id.
      for (let i = this.#records.length - 1; i >= 0; i--) {
        const candidate = this.#records[i]!;
        if (candidate.key === key && candidate.id === undefined && isLive(candidate)) {
          record = candidate;
          break;
        }
      }
      if (record === undefined) return;
      record.id = id;
      this.#byId.set(id, record);
    }
    const last = record.segments.at(-1);
    if (!(last?.kind === 'queued' && last.to === undefined)) this.#open(record, 'queued');
    record.state = 'queued';
  }

  #started(id: number): void {
    const record = this.#byId.get(id);
    if (record === undefined) return;
    this.#open(record, 'attempt');
    record.state = 'active';
  }

  #refused(endpoint: string): void {
    const now = this.#inspector.now();
    this.#add({
      id: undefined,
      key: endpoint,
      endpoint,
      tracker: undefined,
      startedAt: now,
      state: 'refused',
      segments: [],
      probe: false,
      endedAt: now,
      outcome: 'circuit open: refused without a request',
    });
  }

  #end(
    record: FlightRecord | undefined,
    state: FlightState,
    outcome: string,
    now = this.#inspector.now(),
  ): void {
    if (record === undefined || !isLive(record)) return;
    this.#ended++;
    this.#advance(record, now);
    this.#close(record, now, state === 'done' ? 'done' : 'failed');
    record.state = state;
    record.endedAt = now;
    record.outcome = outcome;
    this.#unlive(record);
    this.#trimSome();
  }

  /**
   * Takes an ended record out of its key's live records. Not by a search (thousands of flights
   * can be live on one key: POSTs, which never share a flight): the list drops its ended records
   * when more than half of it has ended, or from its end when a join looks there, so each record
   * is looked at a bounded number of times.
   */
  #unlive(record: FlightRecord): void {
    const live = this.#liveByKey.get(record.key);
    if (live === undefined) return;
    const { records } = live;
    if (++live.ended === records.length) this.#liveByKey.delete(record.key);
    else if (live.ended > records.length >> 1) {
      this.visited += records.length;
      live.records = records.filter(isLive);
      live.ended = 0;
    }
  }

  // ── lookups ─────────────────────────────────────────────────────────────────────────────────

  /**
   * A final cancel. Its owner's names the flight's tracker; its last joiner's names the joiner's
   * own, and the flight is then the key's live record whose tracker is cancelled, which no index
   * finds (several reads of a key can be live and joined: invalidation detaches them). The key's
   * newest live record is looked at now (the common case: the key's one flight); any other is
   * counted as not found, and the key's live records are swept once more than half of them are
   * such: a sweep then ends at least half of what it looks at, which makes it amortized O(1) per
   * flight whichever is cancelled first. `records()` ends the rest, so what a view reads is exact.
   */
  #cancelled({ key, tracker }: ClientEvents['cancel']): void {
    const own = this.#byTracker.get(tracker);
    if (own !== undefined) {
      this.#end(own, 'cancelled', 'cancelled');
      return;
    }
    this.#unfound.set(key, (this.#unfound.get(key) ?? 0) + 1);
    this.#newestLive(key);
    const unfound = this.#unfound.get(key);
    if (unfound === undefined) return;
    const live = this.#liveByKey.get(key);
    if (live === undefined || unfound > (live.records.length - live.ended) >> 1) this.#sweep(key);
  }

  /** Ends the key's live records whose flight was cancelled, and drops its ended ones. */
  #sweep(key: string): void {
    this.#unfound.delete(key);
    const live = this.#liveByKey.get(key);
    if (live === undefined) return;
    // Out of the map while it is swept: the records it ends leave no list to take them out of.
    this.#liveByKey.delete(key);
    this.visited += live.records.length;
    const records: FlightRecord[] = [];
    for (const record of live.records) {
      if (!isLive(record)) continue;
      if (isCancelled(record)) this.#settle(record);
      else records.push(record);
    }
    if (records.length > 0) this.#liveByKey.set(key, { records, ended: 0 });
  }

  /** The newest live record of `key`, for a read: the flight a dedup join joined. */
  #joinable(key: string): FlightRecord | undefined {
    if (!READS.has(key.slice(0, key.indexOf(' ')))) return undefined;
    return this.#newestLive(key);
  }

  /**
   * The newest live record of `key` whose flight goes on. Ended records met at the end go now,
   * and a cancelled flight met there is ended.
   */
  #newestLive(key: string): FlightRecord | undefined {
    for (;;) {
      const live = this.#liveByKey.get(key);
      if (live === undefined) return undefined;
      // Not empty: a list whose records all ended is deleted.
      const record = live.records.at(-1)!;
      if (isLive(record)) {
        if (!isCancelled(record)) return record;
        this.#settle(record);
      } else {
        this.visited++;
        live.records.pop();
        live.ended--;
      }
    }
  }

  /**
   * Ends a live record whose flight ended, as its tracker says and when it did: the event that
   * ended it named another tracker (a joiner's cancel), or came while the recorder was stopped.
   */
  #settle(record: FlightRecord): void {
    const { state, endedAt, error } = record.tracker!;
    // Only `start` meets a success here; its status was on the `success` event, which came while
    // the recorder was stopped (a tracker keeps no response).
    if (state === 'success') this.#end(record, 'done', HIDDEN_SUCCESS, endedAt);
    else if (state === 'error') this.#end(record, 'failed', describeError(error), endedAt);
    else {
      const unfound = this.#unfound.get(record.key);
      if (unfound !== undefined) {
        if (unfound > 1) this.#unfound.set(record.key, unfound - 1);
        else this.#unfound.delete(record.key);
      }
      this.#end(record, 'cancelled', 'cancelled', endedAt);
    }
  }

  // ── records ─────────────────────────────────────────────────────────────────────────────────

  #seed(flight: FlightView): void {
    const known = this.#byTracker.get(flight.tracker);
    if (known !== undefined) {
      if (isLive(known)) this.#resume(known, flight);
      return;
    }
    const { phase } = flight;
    const segments: Segment[] = [];
    if (phase.state === 'retry-wait') {
      // Its failed attempt ended when the wait began.
      const waitFrom = phase.until - phase.delay;
      segments.push({ kind: 'attempt', from: flight.startedAt, to: waitFrom, outcome: 'failed' });
    }
    const { state, kind } = PHASE[phase.state];
    // A rate wait began when it was parked; the rest began with the flight, or as said above.
    const from = phase.state === 'rate-wait' ? phase.since : (segments[0]?.to ?? flight.startedAt);
    segments.push({ kind, from, to: undefined });
    const record = this.#add({
      id: flight.id,
      key: flight.key,
      endpoint: flight.endpoint,
      tracker: flight.tracker,
      startedAt: flight.startedAt,
      state,
      segments,
      probe: flight.probe,
      joins: Math.max(0, flight.consumers - 1),
    });
    record.retry = retryOf(flight);
  }

  /**
   * A flight recorded before a stop and still in progress: if it moved on meanwhile (another
   * phase, or more attempts), its open segment ends when that is known (an attempt at the retry
   * wait it failed into) or else when the recorder stopped, and its phase now is drawn from when
   * it began if known (a retry or rate wait) or else from now. Unchanged (started again at once, as
   * StrictMode does), it stays as it is.
   */
  #resume(record: FlightRecord, flight: FlightView): void {
    const now = this.#inspector.now();
    const before = record.state;
    this.#advance(record, now);
    // Without a scheduler a retry wait that is over was followed by an attempt, drawn above.
    const seen = (this.#seen.get(record) ?? flight.attempts) + (before !== record.state ? 1 : 0);
    const { phase } = flight;
    const { state, kind } = PHASE[phase.state];
    if (state === record.state && flight.attempts === seen) return;
    const retryFrom = phase.state === 'retry-wait' ? phase.until - phase.delay : undefined;
    // An attempt that ended with its flight going on failed.
    this.#close(record, this.#endOf(record, retryFrom, flight.attempts === seen, now), 'failed');
    const from = phase.state === 'rate-wait' ? phase.since : retryFrom;
    addSegment(record, { kind, from: from ?? now, to: undefined });
    record.state = state;
    record.retry = retryOf(flight) ?? record.retry;
    if (record.id === undefined) {
      record.id = flight.id;
      this.#byId.set(flight.id, record);
    }
  }

  /**
   * When a record's open segment ended, for #resume: an attempt seen last, at the retry wait it
   * failed into (`waitFrom`, if no attempt came since); a retry wait, at its `until`; else it is
   * not known, and it ends when the recorder stopped (its last moment seen).
   */
  #endOf(record: FlightRecord, waitFrom: number | undefined, sameAttempt: boolean, now: number) {
    const last = record.segments.at(-1);
    if (last === undefined) return now;
    if (last.kind === 'attempt' && waitFrom !== undefined && sameAttempt) return waitFrom;
    const until = record.retry?.until;
    if (last.kind === 'retry-wait' && until !== undefined && until <= now) return until;
    return Math.max(this.#stoppedAt, last.from);
  }

  #add(
    init: Omit<FlightRecord, 'seq' | 'joins' | 'retry' | 'outcome' | 'endedAt'> &
      Partial<Pick<FlightRecord, 'joins' | 'outcome' | 'endedAt'>>,
  ): FlightRecord {
    const record: FlightRecord = {
      retry: undefined,
      outcome: undefined,
      endedAt: undefined,
      joins: 0,
      ...init,
      seq: ++this.#seq,
    };
    this.#records.push(record);
    if (record.tracker !== undefined) this.#byTracker.set(record.tracker, record);
    if (record.id !== undefined) this.#byId.set(record.id, record);
    if (!isLive(record)) this.#ended++;
    else {
      const live = this.#liveByKey.get(record.key);
      if (live === undefined) this.#liveByKey.set(record.key, { records: [record], ended: 0 });
      else live.records.push(record);
    }
    this.#trimSome();
    return record;
  }

  /** Ends the open segment now and opens one of `kind`. */
  #open(record: FlightRecord, kind: Segment['kind'], outcome?: 'failed'): void {
    const now = this.#inspector.now();
    this.#advance(record, now);
    this.#close(record, now, outcome);
    addSegment(record, { kind, from: now, to: undefined });
  }

  #close(record: FlightRecord, now: number, outcome: 'done' | 'failed' | undefined): void {
    const last = record.segments.at(-1);
    if (last === undefined || last.to !== undefined) return;
    last.to = now;
    if (last.kind === 'attempt' && outcome !== undefined) last.outcome = outcome;
  }

  /** Without a scheduler, a retry wait that is over became an attempt at its `until`. */
  #advance(record: FlightRecord, now: number): void {
    if (this.#scheduled || record.state !== 'retrying' || record.retry === undefined) return;
    const last = record.segments.at(-1);
    if (last?.kind !== 'retry-wait' || last.to !== undefined || now < record.retry.until) return;
    last.to = record.retry.until;
    addSegment(record, { kind: 'attempt', from: record.retry.until, to: undefined });
    record.state = 'active';
  }

  /**
   * Keeps at most `max` records: the oldest ended ones go first; live ones always stay. A pass
   * looks at every record, so an event trims only once more than half the list is to go: each
   * pass then drops at least as many records as it keeps, which makes trimming amortized O(1) per
   * flight however many are live. `records()` trims the rest, so what a view reads is exact.
   */
  #trimSome(): void {
    this.#trim(this.#records.length >> 1);
  }

  /** Drops the excess records if there are more than `slack` of them. */
  #trim(slack: number): void {
    let drop = Math.min(this.#records.length - this.#max, this.#ended);
    if (drop <= slack) return;
    this.visited += this.#records.length;
    this.#ended -= drop;
    this.#records = this.#records.filter((record) => {
      if (drop <= 0 || isLive(record)) return true;
      drop--;
      return this.#forget(record);
    });
  }

  /** Drops an ended record's lookups; returns false (what a filter dropping it returns). */
  #forget(record: FlightRecord): false {
    if (record.tracker !== undefined && this.#byTracker.get(record.tracker) === record) {
      this.#byTracker.delete(record.tracker);
    }
    if (record.id !== undefined && this.#byId.get(record.id) === record)
      this.#byId.delete(record.id);
    return false;
  }

  #changed(): void {
    // No copy per client event (this runs for each while the panel is open): subscribing copies
    // instead. One unsubscribed by an earlier listener is not called; one subscribed during the
    // tell (a listener re-subscribing itself) waits for the next, so a tell always ends.
    const listeners = this.#listeners;
    for (const listener of listeners) if (this.#listeners.includes(listener)) listener();
  }
}
