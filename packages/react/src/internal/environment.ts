import { noop } from './report';

/**
 * Window focus and network reconnect signals: each query watching one holds its own window
 * listeners (the browser's dispatch, no registry of ours in between), removed with it. Only
 * called from effects, never during render, so server rendering never reaches `window`.
 */
/** `focus`: the page became visible or the window gained focus; `online`: back online. */
export type Signal = 'focus' | 'online';

/** The handlers on the window now (for leak checks). */
const live = new Set<unknown>();

/** Runs `listener` on each `signal` until the returned function is called. */
export function onSignal(signal: Signal, listener: () => void): () => void {
  const win = globalThis.window;
  if (win === undefined || typeof win.addEventListener !== 'function') return noop;
  // `focus`: the window gaining focus, or a visibilitychange that shows the page.
  const names = signal === 'online' ? ['online'] : ['visibilitychange', 'focus'];
  const onEvent = (event: Event): void => {
    if (event.type !== 'visibilitychange' || !isDocumentHidden()) listener();
  };
  for (const name of names) win.addEventListener(name, onEvent);
  live.add(onEvent);
  return () => {
    live.delete(onEvent);
    for (const name of names) win.removeEventListener(name, onEvent);
  };
}

/** True while the page is in a background tab (interval refetches pause then). */
export function isDocumentHidden(): boolean {
  return globalThis.document?.visibilityState === 'hidden';
}

/** For leak checks: window listeners currently held by keel. */
export function environmentListenerCount(): number {
  return live.size;
}
