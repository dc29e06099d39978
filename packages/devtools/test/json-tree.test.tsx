import { act, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import {
  handWritten,
  offlineClient,
  renderDevtools,
  selectEntry,
  view,
  watchConsoleErrors,
} from './helpers';

// What JSON has no word for, in the Cache view's data tree: Map, Set, Date, RegExp, Error,
// typed arrays. Data written by hand (`setCached`) or made by a `select` holds them.

/** Each line the tree draws (a leaf's row or a branch's summary), as its text. */
function lines(detail: HTMLElement): string[] {
  return [...detail.querySelectorAll('.kdt-json .kdt-json-row, .kdt-json summary')].map(
    (line) => line.textContent ?? '',
  );
}

/** Opens the branch whose summary starts with `text` (closed); returns the `<details>`. */
function open(detail: HTMLElement, text: string): HTMLDetailsElement {
  const summary = [...detail.querySelectorAll('.kdt-json summary')].find((s) =>
    s.textContent?.startsWith(text),
  ) as HTMLElement | undefined;
  if (summary === undefined) throw new Error(`no branch ${text} in ${lines(detail).join(' | ')}`);
  const details = summary.closest('details') as HTMLDetailsElement;
  expect(details.open).toBe(false);
  act(() => summary.click());
  expect(details.open).toBe(true);
  return details;
}

/**
 * How many of `map`'s entries were read, by any Map iterator (entries, keys, values, for-of,
 * spread) or by forEach: jsdom iterates Maps of its own, so reads are told apart by the keys.
 */
function countReads(map: Map<string, unknown>): () => number {
  let reads = 0;
  const ours = (step: IteratorResult<unknown>) =>
    !step.done &&
    [step.value, Array.isArray(step.value) ? step.value[0] : undefined].some(
      (v) => typeof v === 'string' && v.startsWith('big:'),
    );
  const iterator = Object.getPrototypeOf(new Map().entries()) as Iterator<unknown>;
  const next = iterator.next;
  vi.spyOn(iterator, 'next').mockImplementation(function (this: Iterator<unknown>) {
    const step = next.call(this);
    if (ours(step)) reads++;
    return step;
  });
  const forEach = Map.prototype.forEach;
  vi.spyOn(Map.prototype, 'forEach').mockImplementation(function (
    this: Map<unknown, unknown>,
    ...args
  ) {
    if (this === map) reads += map.size;
    return forEach.apply(this, args);
  });
  return () => reads;
}

/** The detail of a cache entry holding `data`. */
function show(data: unknown): HTMLElement {
  const client = offlineClient();
  client.setCached('GET /typed', handWritten(data));
  renderDevtools(client);
  const detail = selectEntry('/typed');
  expect(within(view()).queryByRole('alert')).toBeNull();
  return detail;
}

describe('data tree: values JSON has no word for', () => {
  it('a Map shows its size and its entries, keyed by what its keys are', () => {
    const errors = watchConsoleErrors();
    const detail = show({
      byId: new Map<unknown, unknown>([
        ['a', 1],
        [2, 'two'],
        [{ id: 3 }, { name: 'three' }],
        // Two keys that read alike: two rows, no React key clash.
        [{ id: 3 }, 'again'],
        [undefined, 'u'],
        [Symbol('s'), 's'],
        [Number.NaN, 'nan'],
        [function load() {}, 'f'],
      ]),
      none: new Map(),
    });
    expect(lines(detail)).toEqual(
      expect.arrayContaining([
        'byId: Map(8)',
        '"a": 1',
        '2: "two"',
        '{"id":3}: {1 key}',
        '{"id":3}: "again"',
        'undefined: "u"',
        'Symbol(s): "s"',
        'NaN: "nan"',
        'ƒ load(): "f"',
        'none: Map(0)',
      ]),
    );
    expect(errors).not.toHaveBeenCalled();
  });

  it('a Set shows its size and its values in order', () => {
    const detail = show({ tags: new Set(['x', 2, null]), empty: new Set() });
    expect(lines(detail)).toEqual(
      expect.arrayContaining(['tags: Set(3)', '0: "x"', '1: 2', '2: null', 'empty: Set(0)']),
    );
  });

  it('a Date shows as its ISO string, an invalid one as Invalid Date; a RegExp as its literal', () => {
    const detail = show({
      at: new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 6)),
      never: new Date(Number.NaN),
      pattern: /ab+c/gi,
    });
    expect(lines(detail)).toEqual(
      expect.arrayContaining([
        'at: 2024-01-02T03:04:05.006Z',
        'never: Invalid Date',
        'pattern: /ab+c/gi',
      ]),
    );
  });

  it('an Error shows its name and message, and opens to its message, stack, cause and own fields', () => {
    const error = new TypeError('boom', { cause: 'the network' });
    Object.assign(error, { code: 'E_BOOM' });
    const detail = show({ failure: error });
    const branch = within(detail).getByText('TypeError: boom').closest('details')!;
    expect(lines(branch)[0]).toBe('failure: TypeError: boom');
    const inside = lines(branch);
    expect(inside).toEqual(
      expect.arrayContaining(['message: "boom"', 'cause: "the network"', 'code: "E_BOOM"']),
    );
    expect(inside.some((line) => line.startsWith('stack: "TypeError: boom'))).toBe(true);
  });

  it('a typed array shows its elements like a list; an ArrayBuffer and a DataView their size', () => {
    const detail = show({
      bytes: new Uint8Array([1, 2, 255]),
      big: new BigInt64Array([2n ** 40n]),
      buffer: new ArrayBuffer(8),
      view: new DataView(new ArrayBuffer(4)),
    });
    expect(lines(detail)).toEqual(
      expect.arrayContaining([
        'bytes: Uint8Array(3)',
        '0: 1',
        '2: 255',
        'big: BigInt64Array(1)',
        '0: 1099511627776',
        'buffer: ArrayBuffer (8 bytes)',
        'view: DataView (4 bytes)',
      ]),
    );
  });
});

describe('data tree: big and hostile Maps and Sets', () => {
  it('a Map of 100,000 entries reads none while closed and the first 100 when opened', () => {
    const big = new Map(Array.from({ length: 100_000 }, (_, i) => [`big:${i}`, i] as const));
    const read = countReads(big);
    // Three levels down: closed when the entry opens.
    const detail = show({ level: { big } });
    expect(lines(detail)).toContain('big: Map(100000)');
    expect(read()).toBe(0);
    const branch = open(detail, 'big: Map(100000)');
    expect(lines(branch)).toEqual(
      expect.arrayContaining(['"big:0": 0', '"big:99": 99', '… 99900 more']),
    );
    expect(within(branch).queryByText('"big:100"')).toBeNull();
    // The entries read are the ones drawn (and the one after: an iterator says it ended).
    expect(read()).toBeLessThanOrEqual(101);
  });

  it('a Map or Set holding itself, revoked Proxies as keys and values, and a Proxy of a Map', () => {
    const errors = watchConsoleErrors();
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const map = new Map<unknown, unknown>([[proxy, 'value of a revoked key']]);
    map.set('self', map);
    map.set('gone', proxy);
    const set = new Set<unknown>();
    set.add(set);
    const detail = show({ map, set, proxied: new Proxy(new Map([[1, 1]]), {}) });
    expect(lines(detail)).toEqual(
      expect.arrayContaining([
        'map: Map(3)',
        '[unreadable]: "value of a revoked key"',
        '"self": [circular]',
        'set: Set(1)',
        '0: [circular]',
      ]),
    );
    const text = lines(detail);
    expect(text.some((line) => /^"gone": \[unreadable: .*revoked/.test(line))).toBe(true);
    // A Proxy of a Map is no Map (Map methods refuse it): unreadable, the rest drawn.
    expect(text.some((line) => /^proxied: \[unreadable: TypeError/.test(line))).toBe(true);
    expect(errors).not.toHaveBeenCalled();
  });

  it('methods a subclass overrides are not called: size, entries, length, toISOString, message throw', () => {
    const errors = watchConsoleErrors();
    class Trap extends Map<string, number> {
      override get size(): number {
        throw new Error('size trap');
      }
      override entries(): never {
        throw new Error('entries trap');
      }
      override [Symbol.iterator](): never {
        throw new Error('iterator trap');
      }
    }
    class Sneaky extends Date {
      override toISOString(): string {
        throw new Error('date trap');
      }
    }
    class Bytes extends Uint8Array {
      override get length(): number {
        throw new Error('length trap');
      }
    }
    const failing = new Error('real message');
    Object.defineProperty(failing, 'message', {
      get() {
        throw new Error('message trap');
      },
    });
    const detail = show({
      trap: new Trap([['a', 1]]),
      when: new Sneaky(0),
      bytes: new Bytes([7]),
      failing,
      after: 'drawn',
    });
    const text = lines(detail);
    expect(text).toEqual(
      expect.arrayContaining([
        'trap: Map(1)',
        '"a": 1',
        'when: 1970-01-01T00:00:00.000Z',
        'bytes: Uint8Array(1)',
      ]),
    );
    // An Error whose message throws when read: unreadable, its siblings drawn.
    expect(text.some((line) => /^failing: \[unreadable: .*message trap/.test(line))).toBe(true);
    expect(text).toContain('after: "drawn"');
    expect(errors).not.toHaveBeenCalled();
  });
});
