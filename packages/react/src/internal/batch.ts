/**
 * Coalesces store-change notifications into one macrotask.
 *
 * Every useSyncExternalStore notification is a synchronous-lane update: React renders it in a
 * microtask. Responses of many keys arrive in separate tasks (one per timer or network read), so
 * notifying at once would cost one render pass over the tree per response; 1,000 keys resolving
 * together would mean 1,000 passes. Queued here, everything that changed before the flush task runs
 * is delivered in one task, and React renders it in one pass.
 *
 *   response A ─ state A ─┐
 *   response B ─ state B ─┼─ flush task: notify A's and B's components ─ one render
 *   response C ─ state C ─┘
 *
 * The state itself changes immediately (a render for any other reason reads it); only the wake-up
 * waits. A listener is queued once however often it is notified, and a cancelled one never runs.
 */
const pending = new Set<() => void>();
let scheduled = false;
let schedule: (() => void) | undefined;

export function notifyLater(listener: () => void): void {
  pending.add(listener);
  if (scheduled) return;
  scheduled = true;
  (schedule ??= pickScheduler())();
}

/** Drops a queued notification (its listener unsubscribed). */
export function cancelNotify(listener: () => void): void {
  pending.delete(listener);
}

function flush(): void {
  scheduled = false;
  const listeners = [...pending];
  pending.clear();
  for (const listener of listeners) listener();
}

/**
 * Schedules `flush` in the earliest macrotask the platform offers without the 4 ms clamp of
 * nested setTimeout. One flush is pending at a time (`scheduled`), so nothing else is queued.
 */
function pickScheduler(): () => void {
  if (typeof setImmediate === 'function') return () => setImmediate(flush);
  if (typeof MessageChannel === 'function') {
    const channel = new MessageChannel();
    channel.port1.onmessage = flush;
    return () => channel.port2.postMessage(null);
  }
  return () => setTimeout(flush, 0);
}
