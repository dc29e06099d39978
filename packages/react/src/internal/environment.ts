import { noop } from './report';

/**
 * Window focus and network reconnect signals, shared by every query: one set of window listeners
 * while anyone listens, none otherwise. Only called from effects, never during render, so server
 * rendering never reaches `window`.
 */
/** `focus`: the page became visible or the window gained focus; `online`: back online. */
export type Signal = 'focus' | 'online';

const focus = new Set<() => void>();
/**
 * The window events listened to, each with the listeners of the signal it is: visibilitychange is
 * `focus` too (when it shows the page).
 */
const listeners: Record<Signal | 'visibilitychange', Set<() => void>> = {
  visibilitychange: focus,
  focus,
  online: new Set(),
};
const EVENTS = Object.keys(listeners) as (keyof typeof listeners)[];
let target: Window | undefined;

function onEvent(event: Event): void {
  const type = event.type as keyof typeof listeners;
  if (type === 'visibilitychange' && isDocumentHidden()) return;
  // A copy: one added during this event (say, one listening again from its own call) is called
  // from the next event on, not visited by this loop (which it would keep endless). One copy per
  // window event, rare; the smallest code in app D (a copy-on-write array costs more bytes).
  for (const listener of [...listeners[type]]) listener();
}

/** Runs `listener` on each `signal` until the returned function is called. */
export function onSignal(signal: Signal, listener: () => void): () => void {
  const win = globalThis.window;
  if (win === undefined || typeof win.addEventListener !== 'function') return noop;
  // A wrapper per call: listening twice with one function needs two stops. One stopped during an
  // event (by an earlier listener) is still in that event's copy: it checks it is still listening.
  const entry = () => {
    if (listeners[signal].has(entry)) listener();
  };
  listeners[signal].add(entry);
  if (target === undefined) {
    target = win;
    for (const name of EVENTS) win.addEventListener(name, onEvent);
  }
  return () => {
    // Deleted now (not stopped before), and the last: `target` holds the window listened to.
    if (listeners[signal].delete(entry) && environmentListenerCount() === 0) {
      for (const name of EVENTS) target!.removeEventListener(name, onEvent);
      target = undefined;
    }
  };
}

/** True while the page is in a background tab (interval refetches pause then). */
export function isDocumentHidden(): boolean {
  return globalThis.document?.visibilityState === 'hidden';
}

/** For leak checks: window listeners currently held by keel. */
export function environmentListenerCount(): number {
  return focus.size + listeners.online.size;
}
