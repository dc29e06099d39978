import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Writable } from 'node:stream';
import type { Clock, TimerHandle } from './clock';
import { h2Progress, h2StreamOf, resetH2 } from './h2';

/**
 * What a watched response needs to time out a stalled client: a streamed body (`sendFile`,
 * `ctx.send(stream)`), a large buffered one (written in slices), one a handler writes through
 * `ctx.res`, the tail of an ended event stream, and one-piece replies left queued.
 */
export interface SendWatch {
  readonly clock: Clock;
  /** The app's `sendTimeout` in ms; 0 = off. */
  readonly ms: number;
}

/** Stops nothing: what is returned when there is nothing to watch. */
export const noop = (): void => {};

/**
 * Bytes of `res` that wait for its client: the response is congested (`writableNeedDrain`), or
 * it was ended and its last bytes are still queued (`writableNeedDrain` is false once ended).
 */
function waiting(res: ServerResponse): boolean {
  return res.writableNeedDrain || (res.writableEnded && !res.writableFinished);
}

/**
 * {@link waiting} for a response of an attached HTTP/2 server, judged by its stream: flow control
 * holds a stream's bytes in its own queue, whatever the session's socket does.
 */
function streamWaiting(stream: Writable): boolean {
  return stream.writableNeedDrain || (stream.writableEnded && !stream.writableFinished);
}

/**
 * What tells the progress of `res`: its connection's ({@link delivered}), or for HTTP/2 its own
 * stream's (a session's other streams may move while this one is stalled).
 */
export function progressOf(res: ServerResponse): () => number {
  const stream = h2StreamOf(res);
  if (stream !== undefined) return h2Progress(stream);
  const socket = res.req.socket;
  return () => delivered(socket);
}

/**
 * Bytes the connection has handed to the kernel, whichever response they were of: written
 * (queued or sent) minus still queued. It grows each time a socket write completes, which is
 * when the client took something.
 */
function delivered(socket: Socket): number {
  return socket.bytesWritten - socket.writableLength;
}

/**
 * A connection's progress as a watch last saw it: what it had delivered then (`mark`, -1 when
 * nothing of the watched bytes was waiting) and since when (`since`, clock time).
 */
interface Progress {
  mark: number;
  since: number;
}

/**
 * Whether `socket` has delivered nothing for `ms` while bytes wait; notes its progress when it
 * moved (nginx's `send_timeout`).
 */
function stalled(progress: Progress, moved: number, now: number, ms: number): boolean {
  if (moved !== progress.mark) {
    progress.mark = moved;
    progress.since = now;
    return false;
  }
  return now - progress.since >= ms;
}

/**
 * What a watch's owner says at each check: bytes are `'waiting'` (progress is judged), nothing
 * waits for now (`'idle'`: the next wait starts a new period), the watch is over (`'done'`), the
 * client is to be cut at once (`'cut'`, e.g. over a cap), or another watch has the response for
 * now (`'held'`: as idle, but no check is armed, only the deadline, until {@link StallLoop.wake}).
 */
export type QueueState = 'waiting' | 'idle' | 'done' | 'cut' | 'held';

/**
 * A deadline a stall loop keeps on its own timer besides its checks (an HTTP/2 stream's
 * `requestTimeout`, see h2-request.ts): one timer per stream instead of two.
 */
export interface Deadline {
  /** ms from the start of the watch. */
  readonly ms: number;
  /** Called once, at the deadline; the loop goes on unless it was stopped meanwhile. */
  readonly onExpire: () => void;
}

/**
 * The one stall loop of watchSend, watchBacklog and an event stream's queue: every quarter of
 * `ms` (so a stall is cut within 1.25 periods) it asks `state()`; when bytes have waited for `ms`
 * with no progress (`delivered()` did not grow; or `state()` says `'cut'`), it stops and calls
 * `onStall`. Progress is judged per connection (per stream on HTTP/2), not per response
 * ({@link progressOf}). A `deadline` fires on the same timer, at its time exactly (the timer is
 * armed for it when it comes before the next check). Returns the function that stops it.
 */
export function watchStall(
  delivered: () => number,
  clock: Clock,
  ms: number,
  state: () => QueueState,
  onStall: () => void,
  deadline: Deadline | null = null,
): () => void {
  return stallLoop(delivered, clock, ms, state, onStall, deadline).stop;
}

/** A {@link watchStall} loop that may sleep (`'held'`) until woken. */
interface StallLoop {
  readonly stop: () => void;
  /** Sleeps from now on: no check armed, only the deadline (as when `state()` says `'held'`). */
  readonly hold: () => void;
  /** Checks again from now on, if it sleeps; else nothing. */
  readonly wake: () => void;
}

/**
 * {@link watchStall}'s loop. `ms` 0 checks no sending: the loop keeps the `deadline` alone (a
 * timer armed for it only) and ends once it fired.
 */
function stallLoop(
  delivered: () => number,
  clock: Clock,
  ms: number,
  state: () => QueueState,
  onStall: () => void,
  deadline: Deadline | null,
): StallLoop {
  const every = Math.max(1, Math.floor(ms / 4));
  const progress: Progress = { mark: -1, since: 0 };
  let timer: TimerHandle = null;
  let stopped = false;
  /** Held by another watch: no check armed, only the deadline. */
  let sleeping = false;
  /** Clock time of the deadline; -1 once it fired (or with none). */
  let due = deadline === null ? -1 : clock.now() + deadline.ms;
  /** Arms the next check: the deadline's when `held` (or no sending is checked), else the next. */
  const arm = (held: boolean): void => {
    sleeping = held;
    if (held || ms === 0) {
      if (due === -1) {
        // Nothing to wait for: sleeps until woken, or is over without a send check.
        if (ms === 0) stopped = true;
        return;
      }
      timer = clock.setTimeout(check, due - clock.now());
      return;
    }
    timer = clock.setTimeout(check, due === -1 ? every : Math.min(every, due - clock.now()));
  };
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    if (timer !== null) clock.clearTimeout(timer);
    timer = null;
  };
  const check = (): void => {
    timer = null;
    if (stopped) return;
    if (due !== -1 && clock.now() >= due) {
      due = -1;
      deadline!.onExpire();
      if (stopped) return;
    }
    if (ms === 0) {
      arm(true);
      return;
    }
    // A check off the quarter cadence (armed for the deadline) judges progress as any other.
    const now = state();
    if (now === 'done') {
      stopped = true;
      return;
    }
    if (now === 'idle' || now === 'held') progress.mark = -1;
    else if (now === 'cut' || stalled(progress, delivered(), clock.now(), ms)) {
      stopped = true;
      onStall();
      return;
    }
    arm(now === 'held');
  };
  const rearm = (held: boolean): void => {
    if (stopped || sleeping === held) return;
    if (timer !== null) clock.clearTimeout(timer);
    timer = null;
    arm(held);
  };
  arm(false);
  return { stop, hold: () => rearm(true), wake: () => rearm(false) };
}

/**
 * Closes `res`, queued behind an earlier response of its connection, when that connection is
 * gone: Node emits 'close' only on a response that got its socket, so whatever waits for this one
 * (a pipe, {@link whenDone}) would wait for ever and its request never end.
 */
function closeQueued(res: ServerResponse): void {
  // It got its socket meanwhile (Node closes it then), or it is over already.
  if (res.socket !== null || res.writableFinished || res.closed) return;
  markUnsent(res);
  res.destroy();
  res.emit('close');
}

/**
 * Set on a response none of which reached its connection: closed while queued behind another
 * response of it, the reply that took its queue over the cap, or one whose head was made after
 * its client left (KeelServerResponse, which declares it, so its shape never changes). Set on
 * those paths only: another response does not have it.
 */
export const UNSENT = Symbol('keel.unsent');

type Marked = ServerResponse & { [UNSENT]?: boolean };

/** Notes that nothing of `res` reached its connection (see {@link UNSENT}). */
export function markUnsent(res: ServerResponse): void {
  (res as Marked)[UNSENT] = true;
}

/** Nothing of `res` reached its connection (onResponse: status 0). One property read. */
export function wasUnsent(res: ServerResponse): boolean {
  return (res as Marked)[UNSENT] === true;
}

/**
 * Responses whose every byte was handed to the kernel while their connection was open (what
 * "finished" means): noted when that is known ({@link whenDone}'s 'finish', the cut of a parse
 * error, see onClientError), so a response is judged by it, not by its connection's state when
 * its writer is done (a file's descriptor closes after the response finished: a client may
 * leave on the last byte meanwhile). Written and read off the one-piece reply's path only.
 */
const handedAll = new WeakSet<ServerResponse>();

/** Notes that all of `res` was handed to the kernel while its connection was open. */
export function markHandedOver(res: ServerResponse): void {
  handedAll.add(res);
}

/**
 * Whether `res` is over and not complete: ended, and its connection destroyed before all of it
 * was handed to the kernel.
 */
export function wasCut(res: ServerResponse): boolean {
  if (!res.writableEnded || handedAll.has(res)) return false;
  const stream = h2StreamOf(res);
  // HTTP/2: a stream is destroyed once it closed, finished or not; finished is its own.
  if (stream !== undefined) return stream.destroyed && !stream.writableFinished;
  return res.req.socket.destroyed;
}

/**
 * Whether `res`, just finished (or found finished), had all of it handed over: its connection
 * is still open. HTTP/2 emits a response's 'finish' only once its stream closed, so there the
 * stream tells: its writable side finished (all written, END_STREAM sent) or not (reset).
 */
function handedAllOf(res: ServerResponse, socket: Socket): boolean {
  const stream = h2StreamOf(res);
  return stream === undefined ? !socket.destroyed : stream.writableFinished;
}

/** The responses queued behind another on each connection, closed with it. */
const queuedOn = new WeakMap<Socket, Set<ServerResponse>>();

/**
 * Closes `res` with its connection while it is queued behind another response of it (see
 * closeQueued); returns the function that stops watching. One 'close' listener per connection,
 * however many responses a client pipelines (one each passed Node's ten-listener warning).
 */
export function whileQueued(res: ServerResponse, socket: Socket): () => void {
  if (res.socket !== null) return noop;
  if (socket.destroyed) {
    // Gone before this response was watched (its file was still being looked up, its handler
    // still awaited): its 'close' came already. Next tick, so a write in progress completes.
    process.nextTick(closeQueued, res);
    return noop;
  }
  let queued = queuedOn.get(socket);
  if (queued === undefined) {
    const made = new Set<ServerResponse>();
    queued = made;
    queuedOn.set(socket, made);
    socket.once('close', () => {
      queuedOn.delete(socket);
      for (const r of made) closeQueued(r);
    });
  }
  queued.add(res);
  const own = queued;
  return () => {
    own.delete(res);
  };
}

/**
 * Ends `res` once its connection has delivered nothing for `watch.ms` while bytes of `res` wait
 * (its body is congested, or ended with its tail still queued), as nginx's `send_timeout`
 * ("between two successive write operations"). Progress is judged per connection, not per
 * response: a pipelined response queued behind an earlier one that is still moving waits with
 * it and is not cut. A source that is slow to produce leaves nothing queued and is never cut.
 * Checked every quarter period, so the end comes within 1.25 periods of the last progress.
 * Returns the function that stops watching (call it when the response finished or closed);
 * destroying `res` makes the pipe feeding it release its source (a file's fd). A response
 * queued behind another is closed when its connection closes, `sendTimeout` or not.
 */
export function watchSend(res: ServerResponse, watch: SendWatch): () => void {
  const { clock, ms } = watch;
  // `res.socket` is null while the response waits behind an earlier one; its request's is not.
  const socket = res.req.socket;
  const unqueue = whileQueued(res, socket);
  if (ms === 0) return unqueue;
  // Counted toward its connection's cap while it waits behind another response (a buffered body
  // or a file counted already); past it the connection goes, and this response with it.
  fitsQueue(res, watch, QUEUED_STREAM_BYTES);
  const stream = h2StreamOf(res);
  if (stream !== undefined) {
    // Its stream's own watch ({@link watchH2}) leaves it to this one meanwhile.
    watchOwn(res);
    const unwatchStream = watchSendStream(res, stream, watch);
    return () => {
      unwatchStream();
      unwatchOwn(res);
    };
  }
  const unwatch = watchStall(
    progressOf(res),
    clock,
    ms,
    () => (waiting(res) ? 'waiting' : 'idle'),
    () => {
      unqueue();
      // A response still queued behind another has no socket to destroy yet: close the
      // connection it waits on, which is stalled as a whole, and the response with it.
      closeQueued(res);
      res.destroy();
      socket.destroy();
    },
  );
  return () => {
    unqueue();
    unwatch();
  };
}

/**
 * Responses of an attached HTTP/2 server that a watch of their own (a body's, an event stream's
 * queue) watches: the stream's {@link watchH2} leaves them to it.
 */
const watchedOwn = new WeakSet<ServerResponse>();

/**
 * `res` has a watch of its own from now on ({@link watchedOwn}): its HTTP/2 stream's watch
 * sleeps meanwhile, its timer cleared (one timer per stream), keeping only a request deadline.
 */
export function watchOwn(res: ServerResponse): void {
  watchedOwn.add(res);
  h2Loops.get(res)?.hold();
}

/** The own watch of `res` ended: its HTTP/2 stream's watch takes it back. */
function unwatchOwn(res: ServerResponse): void {
  watchedOwn.delete(res);
  h2Loops.get(res)?.wake();
}

/**
 * {@link watchSend} for a response of an attached HTTP/2 server: its stream's progress, its
 * stream's queue; a stall resets that stream alone (its session serves on). Nothing is queued
 * behind another response on HTTP/2 (each stream is its own).
 */
function watchSendStream(res: ServerResponse, stream: Writable, watch: SendWatch): () => void {
  return watchStall(
    progressOf(res),
    watch.clock,
    watch.ms,
    () => (streamWaiting(stream) ? 'waiting' : 'idle'),
    () => {
      resetH2(res);
      res.destroy();
    },
  );
}

/** The stream watch ({@link watchH2}) of each watched HTTP/2 response, with `sendTimeout` on. */
const h2Loops = new WeakMap<ServerResponse, StallLoop>();

/**
 * Watches every response of an attached HTTP/2 server, from its request on, as `sendTimeout`
 * watches an HTTP/1 connection: a reply ended in one piece (which HTTP/1 watches by its
 * connection's queue), a body the handler writes through ctx.res, whatever waits on a stream
 * whose client stopped reading. Without it a session could open stream after stream, read
 * none, and pin each one's reply (Node's session memory cap, 10 MB by default, per session) for
 * ever. Sleeps, no timer armed, while another watch has the response ({@link watchedOwn}), woken
 * when a body's watch ends; ends with the stream. Keeps the request's `deadline` (requestTimeout,
 * when a body is to come) on the same timer: one timer per stream, whichever is on. With
 * `sendTimeout` off it keeps the deadline alone; with neither, nothing is watched.
 */
export function watchH2(
  res: ServerResponse,
  watch: SendWatch,
  deadline: Deadline | null = null,
): void {
  const stream = h2StreamOf(res);
  if (stream === undefined || (watch.ms === 0 && deadline === null)) return;
  const loop = stallLoop(
    watch.ms === 0 ? noProgress : h2Progress(stream),
    watch.clock,
    watch.ms,
    () => (watchedOwn.has(res) ? 'held' : streamWaiting(stream) ? 'waiting' : 'idle'),
    () => {
      resetH2(res);
      res.destroy();
    },
    deadline,
  );
  if (watch.ms !== 0) h2Loops.set(res, loop);
  stream.once('close', loop.stop);
}

/** What a watch with no send check reads for progress: never read. */
const noProgress = (): number => 0;

/**
 * Bytes of one-piece replies that may wait on one connection behind an earlier response still
 * being sent: 64 of the largest. Node stops reading a connection's requests once replies wait,
 * but only after running every request of the read it got (2000 GETs fit in 64 KiB): without a
 * cap, one write of pipelined requests could pin 2000 replies of 64 KiB.
 */
export const MAX_QUEUED_BYTES = 4 * 1024 * 1024;

/** A connection with one-piece replies waiting for its client. */
interface Backlog {
  /** The last reply ended: the backlog is over once it finished. */
  last: ServerResponse;
}

const backlogs = new WeakMap<Socket, Backlog>();

/** Bytes of responses waiting behind an earlier response of one connection. */
interface Queue {
  /** Bytes of responses queued behind another response and not yet finished. */
  bytes: number;
  /** Each such response and what it counts for. */
  readonly held: Map<ServerResponse, number>;
  /** 'finish' of a queued response (`this` is the response). */
  readonly finished: (this: ServerResponse) => void;
}

const queues = new WeakMap<Socket, Queue>();

/**
 * What a streamed body (a stream, a file, one a handler writes through ctx.res) counts for while
 * it waits behind another response: its first chunk, which it writes into the response (a file
 * has its descriptor open too). Its length is not known, nor how much it will hold.
 */
export const QUEUED_STREAM_BYTES = 64 * 1024;

/**
 * Counts `size` bytes of `res`, which waits behind an earlier response of its connection, until
 * it finished (once per response, by the largest count it was given); when more than
 * {@link MAX_QUEUED_BYTES} wait, closes the connection and returns false (the caller lets the
 * body go). For every kind of response: Node runs every request of a read it parsed, so any of
 * them can pile up behind a response a client does not read.
 */
export function holdQueued(res: ServerResponse, socket: Socket, size: number): boolean {
  let queue = queues.get(socket);
  if (queue === undefined) {
    const made: Queue = {
      bytes: 0,
      held: new Map(),
      finished(this: ServerResponse) {
        made.bytes -= made.held.get(this) ?? 0;
        made.held.delete(this);
      },
    };
    queue = made;
    queues.set(socket, made);
  }
  const counted = queue.held.get(res);
  if (counted === undefined) {
    queue.bytes += size;
    queue.held.set(res, size);
    res.once('finish', queue.finished);
  } else if (size > counted) {
    // Counted before it was written (a file by its first chunk), it holds more: its head.
    queue.bytes += size - counted;
    queue.held.set(res, size);
  }
  if (queue.bytes <= MAX_QUEUED_BYTES) return true;
  markUnsent(res);
  socket.destroy();
  return false;
}

/**
 * For a response about to be written, which may wait behind another response of its connection:
 * counts `size` toward that connection's cap ({@link holdQueued}). False when its connection is
 * gone, or was closed for being over the cap: write nothing then (a file: do not open it).
 */
export function fitsQueue(res: ServerResponse, watch: SendWatch, size: number): boolean {
  const socket = res.req.socket;
  if (socket.destroyed) return false;
  if (res.socket !== null || !watchable(socket, watch)) return true;
  return holdQueued(res, socket, size);
}

/**
 * Whether `socket` is a connection whose queue is watched: a real one, `sendTimeout` on (the
 * caller checks it is not destroyed).
 */
function watchable(socket: Socket, watch: SendWatch): boolean {
  // An in-process request (`inject`) has no connection to watch.
  return watch.ms !== 0 && typeof socket.bytesWritten === 'number';
}

/**
 * The socket of `res` took all of it at once (a client that reads): nothing waits. Two property
 * reads, the whole cost of the common case for {@link watchEnded} and {@link awaitsSocket}.
 */
function handedOver(res: ServerResponse): boolean {
  const own = res.socket;
  // `undefined`: an HTTP/2 response whose stream closed (Node's compat layer).
  return own != null && own.writableLength === 0;
}

/**
 * Call after a reply was ended in one piece (64 KiB or less, a head): when its bytes were not all
 * handed to the kernel at once (its client is not reading, or it is queued behind an earlier
 * response), its connection is watched as {@link watchSend} watches a body, so a client that
 * pipelines requests and reads none of the replies cannot hold them, and the socket, for ever;
 * and closed at once when more than {@link MAX_QUEUED_BYTES} of them wait behind another
 * response ({@link holdQueued}). One watch per connection, however many replies wait; it ends
 * once the last of them finished. The common case (a client that reads) costs two property reads.
 * A reply that took the connection's queue over the cap is dropped, unsent, with it.
 */
export function watchEnded(res: ServerResponse, watch: SendWatch): void {
  if (handedOver(res)) return;
  const socket = res.req.socket;
  if (socket.destroyed || !watchable(socket, watch)) return;
  const backlog = backlogs.get(socket);
  if (backlog === undefined) {
    backlogs.set(socket, { last: res });
    watchBacklog(socket, watch);
  } else backlog.last = res;
  // Queued behind another response: all of it (head and body) is held until that one finished.
  if (res.socket === null) holdQueued(res, socket, res.writableLength);
}

/**
 * Whether `res` was ended and its bytes still wait for its connection: queued behind an earlier
 * response, or not all handed to the kernel (a client that is not reading). Such a reply is not
 * over yet ({@link replyDone}). Two property reads for one its socket took at once.
 */
export function awaitsSocket(res: ServerResponse): boolean {
  // HTTP/2: the session's socket took all there was, but the stream may still hold it.
  if (handedOver(res)) return h2Holds(res);
  return (
    res.writableEnded &&
    !res.writableFinished &&
    !res.destroyed &&
    // An in-process request (`inject`) has no connection to wait for.
    typeof res.req.socket.bytesWritten === 'number'
  );
}

/** `res` is an HTTP/2 response, ended, whose stream still holds some of it. */
function h2Holds(res: ServerResponse): boolean {
  const stream = h2StreamOf(res);
  return stream !== undefined && res.writableEnded && !stream.writableFinished && !stream.destroyed;
}

/**
 * Resolves as {@link whenDone} for a reply that {@link awaitsSocket}: `true` once it finished,
 * `false` when its connection closed first (also while it was queued behind another response,
 * where Node gives it no 'close').
 */
export function replyDone(res: ServerResponse): Promise<boolean> {
  const unqueue = whileQueued(res, res.req.socket);
  const done = whenDone(res);
  if (unqueue !== noop) void done.then(unqueue);
  return done;
}

/** The watch of {@link watchEnded}: progress judged per connection, as in watchSend. */
function watchBacklog(socket: Socket, { clock, ms }: SendWatch): void {
  const forget = (): void => {
    backlogs.delete(socket);
    socket.off('close', end);
  };
  const state = (): QueueState => {
    if (socket.writableLength > 0) return 'waiting';
    const last = backlogs.get(socket)?.last;
    // All taken; or an earlier response is still being answered: the server's time, not the
    // client's (its replies are flushed, and watched again, when it ends).
    if (last !== undefined && !last.writableFinished && !last.destroyed) return 'idle';
    forget();
    return 'done';
  };
  const unwatch = watchStall(
    () => delivered(socket),
    clock,
    ms,
    state,
    () => {
      forget();
      socket.destroy();
    },
  );
  const end = (): void => {
    forget();
    unwatch();
  };
  socket.once('close', end);
}

/**
 * Resolves when `res` finished (its last byte handed to the kernel) or closed, so that a
 * watcher covers the tail of a body that was ended with bytes still queued: with `true` when it
 * finished, `false` when it was cut first. Node emits 'finish' also when its connection was
 * destroyed with the tail still queued (the last write's callback gets the error, and 'finish'
 * follows it), so a 'finish' on a destroyed connection is a cut too, unless all of the response
 * was handed over before that (see {@link markHandedOver}). A finish is noted then, so the
 * response is judged by it later too. Call it before whatever may outlast the finish (a source's
 * close) is awaited.
 */
export function whenDone(res: ServerResponse): Promise<boolean> {
  const socket = res.req.socket;
  if (res.writableFinished || res.destroyed) {
    return Promise.resolve(
      handedAll.has(res) || (res.writableFinished && handedAllOf(res, socket)),
    );
  }
  return new Promise((resolve) => {
    const finished = (): void => {
      if (handedAllOf(res, socket)) handedAll.add(res);
      done(handedAll.has(res));
    };
    const closed = (): void => done(handedAll.has(res));
    const done = (ok: boolean): void => {
      res.off('finish', finished);
      res.off('close', closed);
      resolve(ok);
    };
    res.on('finish', finished);
    res.on('close', closed);
  });
}

/**
 * `err` is what a stream operation on the response gets when the response closed under it (a
 * `pipeline(src, ctx.res)` cut by `sendTimeout`, by `close()`, or whose client left): Node's
 * premature close, on a response nobody destroyed with an error. A source that fails (or closes
 * early) through `pipeline` destroys the response with its error, so that stays reported. Never
 * throws (a getter of a hostile error cannot make it). Shared by `ctx.send(stream)` and the slot's
 * handler-written responses, so both tell a client's leaving from a source's failure alike.
 */
export function closedUnder(res: ServerResponse, err: unknown): boolean {
  try {
    return (
      (res as { errored?: unknown }).errored == null &&
      (err as { code?: unknown } | null)?.code === 'ERR_STREAM_PREMATURE_CLOSE'
    );
  } catch {
    return false;
  }
}
