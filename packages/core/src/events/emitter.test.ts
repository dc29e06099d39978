import { describe, expect, test, vi } from 'vitest';
import { EventEmitter } from './emitter';

type Events = { a: { n: number }; b: string };

describe('EventEmitter', () => {
  test('on / emit / off', () => {
    const e = new EventEmitter<Events>();
    const fn = vi.fn();
    const off = e.on('a', fn);
    e.emit('a', { n: 1 });
    off();
    e.emit('a', { n: 2 });
    expect(fn).toHaveBeenCalledExactlyOnceWith({ n: 1 });
    expect(e.has('a')).toBe(false);
  });

  test('a listener that is no function is a TypeError naming it; nothing is added', () => {
    // It was added: every emit then called it, and reported its TypeError as a listener's.
    const onError = vi.fn();
    const e = new EventEmitter<Events>({ onError });
    for (const add of [() => e.on('a', 5 as never), () => e.once('a', null as never)]) {
      expect(add).toThrow(/^keel: `listener` must be a function, got /);
    }
    expect(e.listenerCount()).toBe(0);
    e.emit('a', { n: 1 });
    expect(onError).not.toHaveBeenCalled();
    // onEach: handlers the app left out are skipped; one that is there must be a function.
    expect(() => e.onEach({ a: 'x' as never })).toThrow(TypeError);
    expect(e.listenerCount()).toBe(0);
  });

  test('once fires a single time; its unsubscribe works before it fires', () => {
    const e = new EventEmitter<Events>();
    const fn = vi.fn();
    e.once('b', fn);
    e.emit('b', 'x');
    e.emit('b', 'y');
    expect(fn).toHaveBeenCalledExactlyOnceWith('x');
    const never = vi.fn();
    e.once('b', never)();
    e.emit('b', 'z');
    expect(never).not.toHaveBeenCalled();
  });

  test('has and listenerCount', () => {
    const e = new EventEmitter<Events>();
    expect(e.has('a')).toBe(false);
    e.on('a', () => {});
    e.on('a', () => {});
    e.on('b', () => {});
    expect(e.has('a')).toBe(true);
    expect(e.listenerCount('a')).toBe(2);
    expect(e.listenerCount()).toBe(3);
    e.removeAll();
    expect(e.listenerCount()).toBe(0);
    expect(e.has('a')).toBe(false);
  });

  test('removeAll mid-delivery: the event being delivered finishes, queued ones reach nobody', () => {
    const e = new EventEmitter<Events>();
    const heard: string[] = [];
    e.on('a', () => {
      heard.push('a1');
      e.emit('b', 'queued');
      e.removeAll();
    });
    e.on('a', () => heard.push('a2'));
    e.on('b', (s) => heard.push(s));
    e.emit('a', { n: 1 });
    expect(heard).toEqual(['a1', 'a2']);
    // Listening again afterwards works as on a new emitter.
    e.on('b', (s) => heard.push(s));
    e.emit('b', 'later');
    expect(heard).toEqual(['a1', 'a2', 'later']);
    expect(e.listenerCount()).toBe(1);
  });

  test('a listener removing itself (or another) mid-emit does not skip the rest of this emit', () => {
    const e = new EventEmitter<Events>();
    const calls: string[] = [];
    const off1 = e.on('a', () => {
      calls.push('1');
      off1();
    });
    e.on('a', () => calls.push('2'));
    e.emit('a', { n: 0 });
    e.emit('a', { n: 0 });
    expect(calls).toEqual(['1', '2', '2']);
  });

  test('a throwing listener does not stop the others; its error goes to onError, never uncaught', async () => {
    const reported: unknown[] = [];
    const e = new EventEmitter<Events>({
      onError: (err, context) => reported.push([err, context]),
    });
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      const after = vi.fn();
      const boom = new Error('boom');
      e.on('a', () => {
        throw boom;
      });
      e.on('a', after);
      e.emit('a', { n: 1 });
      expect(after).toHaveBeenCalled();
      expect(reported).toEqual([[boom, { source: 'event', event: 'a' }]]);
      await new Promise((r) => setTimeout(r, 0));
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });

  test('without onError a throwing listener is logged', () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const e = new EventEmitter<Events>();
      e.on('a', () => {
        throw new Error('boom');
      });
      e.emit('a', { n: 1 });
      expect(log).toHaveBeenCalledWith('keel: a listener of "a" threw', expect.any(Error));
    } finally {
      log.mockRestore();
    }
  });

  test('the same function added twice needs two offs', () => {
    const e = new EventEmitter<Events>();
    const fn = vi.fn();
    e.on('b', fn);
    e.on('b', fn);
    e.off('b', fn);
    e.emit('b', 'x');
    expect(fn).toHaveBeenCalledTimes(1);
  });

  test('onEach subscribes several listeners and one call removes them all', () => {
    const e = new EventEmitter<Events>();
    const a = vi.fn();
    const b = vi.fn();
    const off = e.onEach({ a, b });
    e.emit('a', { n: 1 });
    e.emit('b', 'x');
    expect(a).toHaveBeenCalledWith({ n: 1 });
    expect(b).toHaveBeenCalledWith('x');
    expect(e.listenerCount()).toBe(2);
    off();
    expect(e.listenerCount()).toBe(0);
    expect(e.has('a') || e.has('b')).toBe(false);
  });

  describe('events emitted while another is being delivered', () => {
    test('wait until it has reached every listener, then go out in the order emitted', () => {
      const e = new EventEmitter<Events>();
      const heard: string[][] = [[], [], []];
      e.on('a', ({ n }) => {
        heard[0]!.push(`a${n}`);
        if (n === 1) {
          e.emit('b', 'x');
          e.emit('a', { n: 2 });
          e.emit('b', 'y');
        }
      });
      for (const i of [1, 2]) {
        e.on('a', ({ n }) => heard[i]!.push(`a${n}`));
        e.on('b', (s) => {
          heard[i]!.push(s);
          // Emitted while a queued event is delivered: after every event queued before it.
          if (s === 'x' && i === 1) e.emit('b', 'z');
        });
      }
      e.emit('a', { n: 1 });
      expect(heard).toEqual([
        ['a1', 'a2'],
        ['a1', 'x', 'a2', 'y', 'z'],
        ['a1', 'x', 'a2', 'y', 'z'],
      ]);
    });

    test('reach the listeners subscribed when they are delivered (a `once` fires once)', () => {
      const e = new EventEmitter<Events>();
      const heard: string[] = [];
      const once = vi.fn();
      let offLate = () => {};
      e.on('a', () => {
        e.emit('b', 'first');
        e.emit('b', 'second');
        offLate();
      });
      e.once('b', once);
      offLate = e.on('b', (s) => heard.push(`late ${s}`));
      e.on('b', (s) => heard.push(s));
      e.emit('a', { n: 0 });
      expect(once).toHaveBeenCalledExactlyOnceWith('first');
      expect(heard).toEqual(['first', 'second']);
    });

    test('emitAhead from the first listener reaches every listener before the outer event', () => {
      const e = new EventEmitter<Events>();
      const heard: string[][] = [[], []];
      e.on('a', ({ n }) => {
        heard[0]!.push(`a${n}`);
        // What the circuit breaker does: announce the change this event caused, ahead of it.
        if (n === 1) e.emitAhead('b', 'ahead');
        // A plain nested emit still waits for the outer event.
        if (n === 1) e.emit('b', 'queued');
      });
      for (const i of [0, 1]) e.on('b', (s) => heard[i]!.push(s));
      e.on('a', ({ n }) => heard[1]!.push(`a${n}`));
      e.emit('a', { n: 1 });
      expect(heard).toEqual([
        ['a1', 'ahead', 'queued'],
        ['ahead', 'a1', 'queued'],
      ]);
      // Outside a delivery it is a plain emit.
      e.emitAhead('b', 'top');
      expect(heard[1]!.at(-1)).toBe('top');
    });

    test('a listener throwing on a queued event is reported; the rest hear it and later emits too', () => {
      const reported: unknown[] = [];
      const e = new EventEmitter<Events>({ onError: (err) => reported.push(err) });
      const heard: string[] = [];
      const boom = new Error('boom');
      e.on('a', ({ n }) => {
        if (n === 1) e.emit('b', 'nested');
        throw boom;
      });
      e.on('b', () => {
        throw boom;
      });
      e.on('b', (s) => heard.push(s));
      e.emit('a', { n: 1 });
      e.emit('b', 'after');
      expect(heard).toEqual(['nested', 'after']);
      expect(reported).toEqual([boom, boom, boom]);
    });
  });
});

describe('EventEmitter.emit called with an extra argument (forEach, bind)', () => {
  test('an emit during a delivery still waits its turn', () => {
    const e = new EventEmitter<{ a: number; b: number }>();
    const heard: string[] = [];
    e.on('a', (n) => {
      heard.push(`a${n}`);
      // forEach passes the index (then the array) after the payload.
      [1, 2].forEach(e.emit.bind(e, 'b') as (n: number, i: number) => void);
    });
    e.on('a', () => heard.push('a-second'));
    e.on('b', (n) => heard.push(`b${n}`));
    e.emit('a', 0);
    expect(heard).toEqual(['a0', 'a-second', 'b1', 'b2']);
  });
});
