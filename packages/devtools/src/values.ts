/**
 * What JSON has no word for, read one way for the data tree and the one-line preview alike. The
 * built-in methods are called, never the value's own: a subclass may override `size`, `entries`,
 * `length` or `toISOString` to throw or never end. Reading a hostile value still throws (a
 * revoked Proxy throws on everything, a Proxy of a Map is refused by Map's methods): callers
 * catch and show it as unreadable.
 */

/** Characters of a label (a RegExp's source, a function's name) kept: a huge one stays cheap. */
const MAX_LABEL = 1_000;

/** %TypedArray%.prototype: the getters and methods every typed array shares. */
const TypedArrayPrototype: { entries(): Iterator<[number, unknown]> } = Object.getPrototypeOf(
  Uint8Array.prototype,
);

/** A Map, a Set or a typed array: listed by entries, read only as far as they are shown. */
export interface Collection {
  /** `Map`, `Set`, or the typed array's kind (`Uint8Array`, also for a subclass of it). */
  readonly name: string;
  readonly size: number;
  /** A Map's entries are shown by key; a Set's values and a typed array's items by position. */
  readonly keyed: boolean;
  /** `[key, value]`, from the built-in iterator (a Set's key is its value, an item's its index). */
  readonly entries: () => Iterator<readonly [unknown, unknown]>;
}

export function collectionOf(value: object): Collection | undefined {
  if (value instanceof Map || value instanceof Set) {
    const keyed = value instanceof Map;
    const intrinsic = keyed ? Map.prototype : Set.prototype;
    return {
      name: keyed ? 'Map' : 'Set',
      size: Reflect.get(intrinsic, 'size', value),
      keyed,
      entries: () => intrinsic.entries.call(value as never),
    };
  }
  // The built-in getter is the brand check: undefined for anything but a typed array.
  const name: string | undefined = Reflect.get(TypedArrayPrototype, Symbol.toStringTag, value);
  if (name === undefined) return undefined;
  return {
    name,
    size: Reflect.get(TypedArrayPrototype, 'length', value),
    keyed: false,
    entries: () => TypedArrayPrototype.entries.call(value as never),
  };
}

/**
 * The one line an object is shown as, when it is one: a Date's ISO string (`Invalid Date`), a
 * RegExp's literal, the size of bytes, a blob or a stream. Undefined for anything else.
 */
export function labelOf(value: object): string | undefined {
  if (value instanceof Date) {
    return Number.isNaN(Date.prototype.getTime.call(value))
      ? 'Invalid Date'
      : Date.prototype.toISOString.call(value);
  }
  if (value instanceof RegExp) return cut(RegExp.prototype.toString.call(value));
  if (value instanceof ArrayBuffer) {
    return `ArrayBuffer (${Reflect.get(ArrayBuffer.prototype, 'byteLength', value)} bytes)`;
  }
  if (value instanceof DataView) {
    return `DataView (${Reflect.get(DataView.prototype, 'byteLength', value)} bytes)`;
  }
  if (typeof Blob !== 'undefined' && value instanceof Blob) {
    const type: string = Reflect.get(Blob.prototype, 'type', value);
    return `Blob (${Reflect.get(Blob.prototype, 'size', value)} bytes${type ? `, ${type}` : ''})`;
  }
  if (typeof ReadableStream !== 'undefined' && value instanceof ReadableStream) {
    return 'ReadableStream';
  }
  return undefined;
}

/** An Error as `TypeError: boom`; undefined for anything else. */
export function errorSummary(value: object): string | undefined {
  return value instanceof Error ? cut(`${value.name}: ${value.message}`) : undefined;
}

/** A function as `ƒ name()`: its source can be any length, its name says enough. */
export function functionLabel(fn: { readonly name: string }): string {
  return `ƒ ${cut(fn.name) || 'anonymous'}()`;
}

function cut(text: string): string {
  return text.length > MAX_LABEL ? `${text.slice(0, MAX_LABEL)}…` : text;
}
