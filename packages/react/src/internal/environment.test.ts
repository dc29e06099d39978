import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { environmentListenerCount, onSignal } from './environment';

const stops: (() => void)[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
  expect(environmentListenerCount()).toBe(0);
});

describe('telling the focus and online listeners', () => {
  it('a listener that listens again from its own call is called once per event (no endless loop)', () => {
    let calls = 0;
    let stop = () => {};
    const again = () => {
      calls++;
      // Bounded, so that an event that keeps visiting the new entry fails instead of hanging.
      if (calls > 10) return;
      stop();
      stop = onSignal('online', again);
    };
    stop = onSignal('online', again);
    stops.push(() => stop());
    window.dispatchEvent(new Event('online'));
    expect(calls).toBe(1);
    window.dispatchEvent(new Event('online'));
    expect(calls).toBe(2);
  });

  it('a listener added during an event is called from the next event on', () => {
    const added = vi.fn();
    const first = vi.fn(() => {
      if (stops.length === 1) stops.push(onSignal('focus', added));
    });
    stops.push(onSignal('focus', first));
    window.dispatchEvent(new Event('focus'));
    expect(added).not.toHaveBeenCalled();
    window.dispatchEvent(new Event('focus'));
    expect(added).toHaveBeenCalledTimes(1);
    expect(first).toHaveBeenCalledTimes(2);
  });

  it('a listener stopped by an earlier one during an event is not called', () => {
    const second = vi.fn();
    let stopSecond = () => {};
    const first = vi.fn(() => stopSecond());
    stops.push(onSignal('focus', first));
    stopSecond = onSignal('focus', second);
    stops.push(stopSecond);
    window.dispatchEvent(new Event('focus'));
    expect(first).toHaveBeenCalledTimes(1);
    expect(second).not.toHaveBeenCalled();
  });

  it('one function listened to twice is called twice and needs two stops', () => {
    const listener = vi.fn();
    const stopOne = onSignal('online', listener);
    const stopTwo = onSignal('online', listener);
    stops.push(stopOne, stopTwo);
    window.dispatchEvent(new Event('online'));
    expect(listener).toHaveBeenCalledTimes(2);
    stopOne();
    stopOne();
    window.dispatchEvent(new Event('online'));
    expect(listener).toHaveBeenCalledTimes(3);
    stopTwo();
    window.dispatchEvent(new Event('online'));
    expect(listener).toHaveBeenCalledTimes(3);
  });
});

describe('visibilitychange', () => {
  it('is a focus signal when it shows the page, none when it hides it', () => {
    let state: DocumentVisibilityState = 'hidden';
    const visibility = vi.spyOn(document, 'visibilityState', 'get').mockImplementation(() => state);
    onTestFinished(() => visibility.mockRestore());
    const focused = vi.fn();
    const online = vi.fn();
    stops.push(onSignal('focus', focused), onSignal('online', online));
    // Fired at the document, as browsers do: it bubbles to the window.
    document.dispatchEvent(new Event('visibilitychange', { bubbles: true }));
    expect(focused).not.toHaveBeenCalled();
    state = 'visible';
    document.dispatchEvent(new Event('visibilitychange', { bubbles: true }));
    expect(focused).toHaveBeenCalledTimes(1);
    expect(online).not.toHaveBeenCalled();
  });
});
