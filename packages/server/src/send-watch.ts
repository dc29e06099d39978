import type { ServerResponse } from 'node:http';
import type { Clock, TimerHandle } from './clock';

/**
 * What a streamed body (`sendFile`, `ctx.send(stream)`) or a large buffered one (written in
 * slices) needs to time out a stalled client.
 */
export interface SendWatch {
  readonly clock: Clock;
  /** The app's `sendTimeout` in ms; 0 = off. */
  readonly ms: number;
}

const OFF = (): void => {};

/**
 * Ends `res` once its client has taken nothing for `watch.ms` while bytes wait for it: the
 * response stayed congested (`writableNeedDrain`) with no 'drain' in between, as nginx's
 * `send_timeout` ("between two successive write operations"). A source that is slow to produce
 * leaves nothing queued and is never cut. Checked every quarter period, so the end comes within
 * 1.25 periods of the last progress. Returns the function that stops watching (call it when the
 * body is done); destroying `res` makes the pipe feeding it release its source (a file's fd).
 */
export function watchSend(res: ServerResponse, watch: SendWatch): () => void {
  const { clock, ms } = watch;
  if (ms === 0) return OFF;
  const every = Math.max(1, Math.floor(ms / 4));
  let drains = 0;
  /** Drains counted when congestion was first seen, and when; -1: not congested then. */
  let seenDrains = -1;
  let since = 0;
  let timer: TimerHandle = null;
  let stopped = false;
  const onDrain = (): void => {
    drains++;
  };
  const check = (): void => {
    timer = null;
    if (stopped) return;
    if (!res.writableNeedDrain) seenDrains = -1;
    else if (seenDrains !== drains) {
      seenDrains = drains;
      since = clock.now();
    } else if (clock.now() - since >= ms) {
      stop();
      res.destroy();
      return;
    }
    timer = clock.setTimeout(check, every);
  };
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    if (timer !== null) clock.clearTimeout(timer);
    res.off('drain', onDrain);
  };
  res.on('drain', onDrain);
  timer = clock.setTimeout(check, every);
  return stop;
}
