import { afterEach, describe, expect, it, vi } from 'vitest';
import { preview } from '../src/format';

// The one-line preview (the Live events view's summary of an event's data) shows what JSON has no
// word for as the data tree does (json-tree.test.tsx): a Map's entries, a Set's values, a Date's
// ISO string, a RegExp's literal, an Error's name and message, a typed array's items.

afterEach(() => {
  vi.restoreAllMocks();
});

describe('preview: values JSON has no word for, as the data tree shows them', () => {
  it('a Map shows its size and its entries, keyed by what its keys are', () => {
    const byId = new Map<unknown, unknown>([
      ['a', 1],
      [2, 'two'],
      [{ id: 3 }, { name: 'three' }],
      [undefined, 'u'],
      [Symbol('s'), 's'],
      [Number.NaN, 'nan'],
      [function load() {}, 'f'],
    ]);
    expect(preview({ byId, none: new Map() }, 500)).toBe(
      '{"byId":Map(7){"a":1,2:"two",{"id":3}:{"name":"three"},undefined:"u",Symbol(s):"s",NaN:"nan",ƒ load():"f"},"none":Map(0)}',
    );
  });

  it('a Set shows its size and its values in order', () => {
    expect(preview({ tags: new Set(['x', 2, null]), empty: new Set() }, 200)).toBe(
      '{"tags":Set(3)["x",2,null],"empty":Set(0)}',
    );
  });

  it('a Date shows as its ISO string, an invalid one as Invalid Date; a RegExp as its literal', () => {
    const value = {
      at: new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 6)),
      never: new Date(Number.NaN),
      pattern: /ab+c/gi,
    };
    expect(preview(value, 200)).toBe(
      '{"at":2024-01-02T03:04:05.006Z,"never":Invalid Date,"pattern":/ab+c/gi}',
    );
  });

  it('an Error shows its name and message', () => {
    const error = Object.assign(new TypeError('boom', { cause: 'the network' }), { code: 'E' });
    expect(preview({ failure: error, after: 1 }, 200)).toBe(
      '{"failure":TypeError: boom,"after":1}',
    );
  });

  it('a typed array shows its items like a list; an ArrayBuffer and a DataView their size', () => {
    const value = {
      bytes: new Uint8Array([1, 2, 255]),
      big: new BigInt64Array([2n ** 40n]),
      none: new Float32Array(0),
      buffer: new ArrayBuffer(8),
      view: new DataView(new ArrayBuffer(4)),
    };
    expect(preview(value, 300)).toBe(
      '{"bytes":Uint8Array(3)[1,2,255],"big":BigInt64Array(1)[1099511627776],"none":Float32Array(0),"buffer":ArrayBuffer (8 bytes),"view":DataView (4 bytes)}',
    );
  });
});

describe('preview: big and hostile Maps, Sets and typed arrays', () => {
  it('a Map of 100,000 entries is read only as far as the preview shows it', () => {
    const big = new Map(Array.from({ length: 100_000 }, (_, i) => [`big:${i}`, i] as const));
    const iterator = Object.getPrototypeOf(new Map().entries()) as Iterator<unknown>;
    const next = vi.spyOn(iterator, 'next');
    const text = preview({ big }, 80);
    const steps = next.mock.calls.length;
    next.mockRestore();
    expect(text).toMatch(/^\{"big":Map\(100000\)\{"big:0":0,"big:1":1,.*…$/);
    expect(text).toHaveLength(80);
    // About 8 entries fit in 80 characters; a walk of the whole Map steps 100,000 times.
    expect(steps).toBeLessThan(20);
  });

  it('a typed array of 100,000 items is read only as far as the preview shows it', () => {
    const huge = new Uint8Array(100_000);
    const iterator = Object.getPrototypeOf([][Symbol.iterator]()) as Iterator<unknown>;
    const next = vi.spyOn(iterator, 'next');
    const text = preview(huge, 80);
    const steps = next.mock.calls.length;
    next.mockRestore();
    expect(text).toMatch(/^Uint8Array\(100000\)\[0,0,0,.*…$/);
    expect(steps).toBeLessThan(50);
  });

  it('a Map or Set holding itself, revoked Proxies as keys and values, and a Proxy of a Map', () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const map = new Map<unknown, unknown>([[proxy, 'value of a revoked key']]);
    map.set('self', map);
    map.set('gone', proxy);
    const set = new Set<unknown>();
    set.add(set);
    const value = { map, set, proxied: new Proxy(new Map([[1, 1]]), {}), after: 'drawn' };
    expect(preview(value, 300)).toBe(
      '{"map":Map(3){[unreadable]:"value of a revoked key","self":[circular],"gone":[unreadable]},"set":Set(1)[[circular]],"proxied":[unreadable],"after":"drawn"}',
    );
  });

  it("a subclass's overrides are not called: size, entries, length, toISOString, toJSON, message", () => {
    const trap = (what: string): never => {
      throw new Error(`${what} trap`);
    };
    class TrapMap extends Map<string, number> {
      override get size(): number {
        return trap('size');
      }
      override entries(): never {
        return trap('entries');
      }
      override [Symbol.iterator](): never {
        return trap('iterator');
      }
      toJSON(): never {
        return trap('toJSON');
      }
    }
    class TrapSet extends Set<number> {
      override values(): never {
        return trap('values');
      }
      override entries(): never {
        return trap('entries');
      }
      toJSON(): never {
        return trap('toJSON');
      }
    }
    class Sneaky extends Date {
      override toISOString(): never {
        return trap('toISOString');
      }
      override toJSON(): never {
        return trap('toJSON');
      }
    }
    class Bytes extends Uint8Array {
      override get length(): number {
        return trap('length');
      }
      override entries(): never {
        return trap('entries');
      }
    }
    const failing = new Error('real message');
    Object.defineProperty(failing, 'message', { get: () => trap('message') });
    const value = {
      map: new TrapMap([['a', 1]]),
      set: new TrapSet([1]),
      when: new Sneaky(0),
      bytes: new Bytes([7]),
      failing,
      after: 'drawn',
    };
    expect(preview(value, 300)).toBe(
      '{"map":Map(1){"a":1},"set":Set(1)[1],"when":1970-01-01T00:00:00.000Z,"bytes":Uint8Array(1)[7],"failing":[unreadable],"after":"drawn"}',
    );
  });
});

describe("preview: the data's own methods are not called", () => {
  it("an object's toJSON is not called, counting or throwing: its keys show, as in the tree", () => {
    let calls = 0;
    const counting = {
      id: 1,
      toJSON() {
        calls++;
        return 'what toJSON says';
      },
    };
    const throwing = {
      id: 2,
      toJSON(): never {
        throw new Error('toJSON trap');
      },
    };
    class Model {
      id = 3;
      toJSON() {
        calls++;
        return { replaced: true };
      }
    }
    expect(preview({ counting, throwing, model: new Model() }, 300)).toBe(
      '{"counting":{"id":1,"toJSON":ƒ toJSON()},"throwing":{"id":2,"toJSON":ƒ toJSON()},"model":{"id":3}}',
    );
    expect(preview(throwing, 300)).toBe('{"id":2,"toJSON":ƒ toJSON()}');
    expect(preview([new Model()], 300)).toBe('[{"id":3}]');
    expect(calls).toBe(0);
  });
});

describe('preview: what JSON leaves out or writes null, as the tree shows it', () => {
  it('undefined, functions, symbols, NaN and Infinity in a list, an object, a Map and a Set', () => {
    // biome-ignore lint/suspicious/noSparseArray: a hole reads as undefined, as in the tree
    const list = [1, undefined, function load() {}, Symbol('s'), Number.NaN, -Infinity, , null];
    expect(preview(list, 300)).toBe(
      '[1,undefined,ƒ load(),Symbol(s),NaN,-Infinity,undefined,null]',
    );
    const record = { a: undefined, run() {}, s: Symbol('t'), n: Number.NaN, i: Infinity, z: 0 };
    expect(preview(record, 300)).toBe(
      '{"a":undefined,"run":ƒ run(),"s":Symbol(t),"n":NaN,"i":Infinity,"z":0}',
    );
    const map = new Map<string, unknown>([
      ['u', undefined],
      ['f', () => 0],
    ]);
    expect(preview({ map, set: new Set([undefined, Number.NaN]) }, 300)).toBe(
      '{"map":Map(2){"u":undefined,"f":ƒ anonymous()},"set":Set(2)[undefined,NaN]}',
    );
    expect(preview(new Float64Array([Number.NaN, Infinity]), 300)).toBe(
      'Float64Array(2)[NaN,Infinity]',
    );
  });

  it('a value that is one of them on its own', () => {
    expect(
      [undefined, Number.NaN, Symbol('x'), function go() {}, 2n].map((v) => preview(v)),
    ).toEqual(['undefined', 'NaN', 'Symbol(x)', 'ƒ go()', '2']);
  });
});
