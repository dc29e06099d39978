/**
 * A custom `fetch` may reject (or throw) with anything: `null`, a string, an object whose
 * `message`, `name` or `code` getter throws, a revoked Proxy (every property read, even
 * `instanceof`, throws). Reading such a value used to throw inside the attempt's rejection
 * handler: the request stayed pending forever and the error went unhandled. It fails like any
 * other fetch failure: a NetworkError naming the request, the value kept as its `cause`, retried
 * as network errors are.
 */
import { describe, expect, test } from 'vitest';
import {
  CancelledError,
  CircuitOpenError,
  HttpError,
  isNetworkError,
  isTimeoutError,
  KeelError,
  NetworkError,
  ParseError,
  TimeoutError,
} from '../src/index';
import { collectUnhandledRejections, debugOf, makeClient, track } from './helpers';

const boom = () => {
  throw new Error('a getter that throws');
};

function revoked(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

/** A Proxy whose every trap throws: reading anything of it, even its prototype, fails. */
function hostile(): object {
  const trap = () => boom();
  return new Proxy(
    {},
    { get: trap, has: trap, getPrototypeOf: trap, getOwnPropertyDescriptor: trap, ownKeys: trap },
  );
}

const VALUES: [string, () => unknown][] = [
  ['null', () => null],
  ['undefined', () => undefined],
  ['a string', () => 'offline'],
  [
    'an object whose message getter throws',
    () => Object.defineProperty({}, 'message', { get: boom }),
  ],
  ['an object whose name getter throws', () => Object.defineProperty({}, 'name', { get: boom })],
  ['an object whose code getter throws', () => Object.defineProperty({}, 'code', { get: boom })],
  [
    'an Error whose cause getter throws',
    () => Object.defineProperty(new Error('x'), 'cause', { get: boom }),
  ],
  [
    'an object whose errors getter throws',
    () => Object.defineProperty({}, 'errors', { get: boom }),
  ],
  [
    'an object whose toString throws',
    () => ({ toString: boom, [Symbol.toPrimitive]: boom, message: 'm' }),
  ],
  ['a revoked Proxy', revoked],
  ['a Proxy whose every trap throws', hostile],
];

describe('a fetch that rejects with a value that cannot be read', () => {
  const unhandled = collectUnhandledRejections();

  /** A client whose fetch rejects with (or, `sync`, throws) `value`, counting its calls. */
  function failingWith(value: unknown, attempts: number, sync = false) {
    let calls = 0;
    const fetch = () => {
      calls++;
      if (sync) throw value;
      return Promise.reject(value);
    };
    const t = makeClient({ fetch, retry: { attempts } });
    return { ...t, calls: () => calls };
  }

  test.each(VALUES)(
    '%s: the request rejects with a NetworkError, retried, its cause kept',
    async (_, make) => {
      const value = make();
      const t = failingWith(value, 2);
      const p = track(t.client.get('/net'));
      await t.clock.advance(100);
      expect(p.current.state).toBe('rejected');
      const reason = (p.current as { reason: NetworkError }).reason;
      expect(isNetworkError(reason)).toBe(true);
      expect(reason).toMatchObject({
        method: 'GET',
        url: 'https://api.test/net',
        code: 'ERR_NETWORK',
      });
      expect(reason.cause).toBe(value);
      expect(t.calls()).toBe(2);
      expect(t.of('retry').map((e) => isNetworkError(e.error))).toEqual([true]);
      expect(t.of('error')).toHaveLength(1);
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
      expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
      expect(t.clock.live).toBe(0);
    },
  );

  test.each(VALUES)('%s, thrown synchronously by fetch: the same NetworkError', async (_, make) => {
    const value = make();
    const t = failingWith(value, 1, true);
    const p = track(t.client.get('/sync'));
    await t.clock.advance(0);
    const reason = (p.current as { reason: NetworkError }).reason;
    expect(isNetworkError(reason)).toBe(true);
    expect(reason.cause).toBe(value);
    await new Promise((resolve) => setImmediate(resolve));
    expect(unhandled).toEqual([]);
  });
});

describe('a fetch that returns no promise', () => {
  test.each([
    ['a revoked Proxy', revoked],
    ['null', () => null],
  ])('(%s): the request rejects with a NetworkError, no timer or flight left', async (_, make) => {
    const value = make();
    const t = makeClient({
      fetch: (() => value) as unknown as typeof fetch,
      retry: { attempts: 1 },
      timeout: 1000,
    });
    const p = track(t.client.get('/odd'));
    await t.clock.advance(0);
    const reason = (p.current as { reason: NetworkError }).reason;
    expect(isNetworkError(reason)).toBe(true);
    expect(t.clock.live).toBe(0);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
  });

  test('a Response returned as it is (no promise) is answered like a resolved one', async () => {
    const t = makeClient({
      fetch: () => Response.json({ ok: 1 }), // FetchLike: no cast needed
      timeout: 1000,
    });
    await expect(t.client.get('/sync-response')).resolves.toMatchObject({ data: { ok: 1 } });
    expect(t.clock.live).toBe(0);
  });
});

describe("a caller's signal aborted with a value that cannot be read", () => {
  const unhandled = collectUnhandledRejections();

  test.each(VALUES)('%s, before the call: a rejected promise, no throw', async (_, make) => {
    const value = make();
    const t = makeClient();
    let p: Promise<unknown> | undefined;
    expect(() => {
      p = t.client.get('/pre-aborted', { signal: AbortSignal.abort(value) });
    }).not.toThrow();
    await expect(p).rejects.toBeInstanceOf(CancelledError);
    expect(t.fake.calls).toHaveLength(0);
    expect(unhandled).toEqual([]);
  });

  test.each(VALUES)(
    '%s: the request rejects with a CancelledError, its cause kept',
    async (_, make) => {
      const value = make();
      const t = makeClient();
      const controller = new AbortController();
      const p = track(t.client.get('/aborted', { signal: controller.signal }));
      controller.abort(value);
      await t.clock.advance(0);
      const reason = (p.current as { reason: Error }).reason;
      expect(reason).toBeInstanceOf(CancelledError);
      // abort(undefined) aborts with a DOMException AbortError instead.
      if (value !== undefined) expect(reason.cause).toBe(value);
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
      expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
      expect(t.clock.live).toBe(0);
    },
  );
});

/**
 * A fetch wrapper may reject with one of keel's own errors, built for another request (a nested
 * client, a wrapper with its own breaker or timer). A fetch implementation rejects when there is
 * no response, so its error is a cause, never this request's error as it is: one naming another
 * request (its method and URL), a CancelledError that would say this caller cancelled, or a
 * CircuitOpenError the breaker would not count.
 */
describe("a fetch that rejects with one of keel's errors, built for another request", () => {
  const unhandled = collectUnhandledRejections();
  const other = { method: 'POST', url: 'https://elsewhere.test/inner' };

  function rejectingWith(value: unknown, options: Parameters<typeof makeClient>[0] = {}) {
    let calls = 0;
    const fetch = () => {
      calls++;
      return Promise.reject(value);
    };
    const t = makeClient({ retry: { attempts: 2 }, ...options, fetch });
    return { ...t, calls: () => calls };
  }

  test.each([
    ['an HttpError', () => new HttpError(other, { status: 404 })],
    ['a CircuitOpenError', () => new CircuitOpenError(other, { endpoint: 'POST /inner' })],
    ['a ParseError', () => new ParseError(other, { status: 200, body: '{', cause: undefined })],
    ['a bare KeelError', () => new KeelError('inner')],
  ])(
    '%s: a NetworkError naming this request, retried, the error kept as cause',
    async (_, make) => {
      const value = make();
      const t = rejectingWith(value);
      const p = track(t.client.get('/outer'));
      await t.clock.advance(100);
      const reason = (p.current as { reason: NetworkError }).reason;
      expect(isNetworkError(reason)).toBe(true);
      expect(reason).toMatchObject({ method: 'GET', url: 'https://api.test/outer' });
      expect(reason.cause).toBe(value);
      expect(t.calls()).toBe(2);
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    },
  );

  test("another request's NetworkError keeps its code (a POST retried only when nothing was sent)", async () => {
    const value = new NetworkError(other, { cause: undefined, code: 'ECONNREFUSED' });
    const t = rejectingWith(value);
    const p = track(t.client.post('/outer', { a: 1 }));
    await t.clock.advance(100);
    const reason = (p.current as { reason: NetworkError }).reason;
    expect(reason).not.toBe(value);
    expect(reason).toMatchObject({
      method: 'POST',
      url: 'https://api.test/outer',
      code: 'ECONNREFUSED',
    });
    expect(reason.cause).toBe(value);
    expect(t.calls()).toBe(2);
  });

  test('a TimeoutError: a transport TimeoutError naming this request, retried', async () => {
    const value = new TimeoutError(other, { timeout: 5 });
    const t = rejectingWith(value);
    const p = track(t.client.get('/outer'));
    await t.clock.advance(100);
    const reason = (p.current as { reason: TimeoutError }).reason;
    expect(isTimeoutError(reason)).toBe(true);
    expect(reason).toMatchObject({
      method: 'GET',
      url: 'https://api.test/outer',
      kind: 'transport',
    });
    expect(reason.cause).toBe(value);
    expect(t.calls()).toBe(2);
  });

  test('a CancelledError: like an AbortError the fetch raised by itself, naming this request', async () => {
    const value = new CancelledError(other);
    const t = rejectingWith(value);
    const p = track(t.client.get('/outer'));
    await t.clock.advance(100);
    const reason = (p.current as { reason: CancelledError }).reason;
    expect(reason).toBeInstanceOf(CancelledError);
    expect(reason).not.toBe(value);
    expect(reason).toMatchObject({ method: 'GET', url: 'https://api.test/outer' });
    expect(reason.message).toContain('fetch implementation');
    expect(reason.cause).toBe(value);
    expect(t.calls()).toBe(1);
  });

  test("a wrapper's CircuitOpenError counts toward this endpoint's circuit", async () => {
    const value = new CircuitOpenError(other, { endpoint: 'POST /inner' });
    const t = rejectingWith(value, {
      retry: { attempts: 1 },
      circuitBreaker: { failureThreshold: 2 },
    });
    await t.client.get('/outer').catch(() => {});
    await t.client.get('/outer').catch(() => {});
    expect(t.client.circuitBreaker().status('GET', '/outer')).toMatchObject({ state: 'open' });
  });
});

/**
 * A fetch that resolves with something that is no Response (a wrapper forgetting to return the
 * response, a mock returning its JSON): like one that rejects with it, a NetworkError whose cause
 * is that value (README, Errors), not a TypeError from reading a property of it. A Response
 * subclass, or an object shaped like one (a polyfill's), is a Response.
 */
describe('a fetch that resolves with no Response', () => {
  const unhandled = collectUnhandledRejections();

  test.each([
    ['null', () => null],
    ['undefined', () => undefined],
    ['a plain object', () => ({ status: 200, data: { ok: 1 } })],
    ['a string', () => 'ok'],
    ['an object whose headers have no get', () => ({ status: 200, headers: {} })],
  ])('%s: a NetworkError whose cause is that value, retried', async (_, make) => {
    const value = make();
    let calls = 0;
    const t = makeClient({
      fetch: (async () => {
        calls++;
        return value;
      }) as never,
      retry: { attempts: 2 },
      timeout: 1000,
    });
    const p = track(t.client.get('/odd'));
    await t.clock.advance(100);
    const reason = (p.current as { reason: NetworkError }).reason;
    expect(isNetworkError(reason)).toBe(true);
    expect(reason).toMatchObject({ url: 'https://api.test/odd', code: 'ERR_NETWORK' });
    expect(reason.cause).toBe(value);
    expect(calls).toBe(2);
    expect(t.clock.live).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(unhandled).toEqual([]);
  });

  test('a Response subclass, or an object shaped like a Response, is answered', async () => {
    class Sub extends Response {}
    const shaped = { status: 200, statusText: 'OK', headers: new Headers(), text: async () => 'x' };
    for (const value of [new Sub('sub'), shaped]) {
      const t = makeClient({ fetch: (async () => value) as never });
      await expect(t.client.get('/ok')).resolves.toMatchObject({ status: 200 });
    }
  });

  test('a Response whose headers getter throws: a NetworkError whose cause is what it threw', async () => {
    const thrown = new Error('headers unavailable');
    const res = Object.defineProperty(new Response('x'), 'headers', {
      get() {
        throw thrown;
      },
    });
    const t = makeClient({ fetch: (async () => res) as never, retry: { attempts: 1 } });
    const reason = (await t.client.get('/h').catch((e: unknown) => e)) as NetworkError;
    expect(isNetworkError(reason)).toBe(true);
    expect(reason.cause).toBe(thrown);
  });
});
