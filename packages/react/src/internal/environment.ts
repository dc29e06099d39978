import { noop } from './report';

/**
 * Window focus and network reconnect signals, shared by every query: one pair of window listeners
 * while anyone listens, none otherwise. Only called from effects, never during render, so server
 * rendering never reaches `window`.
 */
type Signal = 'focus' | 'online';

const listeners: Record<Signal, Set<() => void>> = { focus: new Set(), online: new Set() };
let detach: (() => void) | undefined;

function emit(signal: Signal): void {
  for (const listener of listeners[signal]) listener();
}

function onVisibility(): void {
  if (globalThis.document?.visibilityState !== 'hidden') emit('focus');
}

function onFocus(): void {
  emit('focus');
}

function onOnline(): void {
  emit('online');
}

function listen(signal: Signal, listener: () => void): () => void {
  const target = globalThis.window;
  if (target === undefined || typeof target.addEventListener !== 'function') return noop;
  const entry = () => listener();
  listeners[signal].add(entry);
  if (detach === undefined) {
    target.addEventListener('visibilitychange', onVisibility, false);
    target.addEventListener('focus', onFocus, false);
    target.addEventListener('online', onOnline, false);
    detach = () => {
      target.removeEventListener('visibilitychange', onVisibility, false);
      target.removeEventListener('focus', onFocus, false);
      target.removeEventListener('online', onOnline, false);
    };
  }
  return () => {
    listeners[signal].delete(entry);
    if (listeners.focus.size === 0 && listeners.online.size === 0 && detach !== undefined) {
      detach();
      detach = undefined;
    }
  };
}

/** Runs `listener` when the page becomes visible or the window gains focus. */
export function onWindowFocus(listener: () => void): () => void {
  return listen('focus', listener);
}

/** Runs `listener` when the browser goes back online. */
export function onReconnect(listener: () => void): () => void {
  return listen('online', listener);
}

/** True while the page is in a background tab (interval refetches pause then). */
export function isDocumentHidden(): boolean {
  return globalThis.document?.visibilityState === 'hidden';
}

/** For leak checks: window listeners currently held by keel. */
export function environmentListenerCount(): number {
  return listeners.focus.size + listeners.online.size;
}
