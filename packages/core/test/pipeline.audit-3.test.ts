/**
 * Chaos audit of the request pipeline (third round): odd header names, clocks that jump, bodies
 * that fail mid-read, fetch implementations that misbehave, flights racing the cache.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CircuitOpenError, type Clock, createClient, HttpError, NetworkError } from '../src/index';
import {
  createFakeFetch,
  FakeClock,
  jsonResponse,
  settle,
  startServer,
  type TestServer,
} from './helpers';

let api: TestServer;
/** The `__proto__` request header of each request /h received, as sent (rawHeaders). */
const protoHeaders: (string | undefined)[] = [];
beforeAll(async () => {
  api = await startServer({
    '/h': (req, res) => {
      const raw = req.rawHeaders;
      const i = raw.findIndex((name, n) => n % 2 === 0 && name.toLowerCase() === '__proto__');
      protoHeaders.push(i === -1 ? undefined : raw[i + 1]);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ proto: i === -1 ? null : raw[i + 1] }));
    },
  });
});
afterAll(() => api.close());

describe('a header named __proto__', () => {
  // JSON.parse (a config file, a header map from a proxy) makes `__proto__` an own key. Node's
  // fetch drops such a header from a headers object, and an object key of that name is no data:
  // it would be neither keyed nor sent, two different requests merged into one key.
  const named = (value: string) => JSON.parse(`{"__proto__":${JSON.stringify(value)}}`);

  test('on a request: the RangeError naming it, nothing sent', async () => {
    const client = createClient({ baseURL: api.url });
    protoHeaders.length = 0;
    for (const name of ['__proto__', '__PROTO__']) {
      const headers = JSON.parse(`{${JSON.stringify(name)}:"a"}`);
      expect(() => client.resolve('GET', '/h', { headers })).toThrow(RangeError);
      await expect(client.get('/h', { headers })).rejects.toThrow(
        `keel: \`headers[${JSON.stringify(name)}]\` must be`,
      );
    }
    expect(protoHeaders).toEqual([]);
    expect(api.requests.filter((r) => r.url === '/h')).toEqual([]);
  });

  test('on the client: the RangeError naming it, at createClient', () => {
    expect(() => createClient({ baseURL: api.url, headers: named('c') })).toThrow(RangeError);
    expect(() => createClient({ baseURL: api.url, headers: named('c') })).toThrow(
      'keel: `headers["__proto__"]` must be',
    );
  });
});

describe('a header value with a control character', () => {
  // Node's fetch refuses every control character but tab in a value (a NetworkError once sent,
  // retried); a RangeError at build time names it instead. NUL, CR and LF were the only ones.
  const refused = ['\x01', '\x08', '\x0b', '\x0c', '\x1b', '\x1f', '\x7f'];

  test.each(refused.map((c) => [c.charCodeAt(0).toString(16), c]))(
    'U+%s: the RangeError naming it, on a request and on the client, nothing sent',
    async (_code, c) => {
      const client = createClient({ baseURL: api.url, retry: false });
      const headers = { 'x-a': `a${c}b` };
      const before = api.requests.length;
      expect(() => client.resolve('GET', '/h', { headers })).toThrow(RangeError);
      await expect(client.get('/h', { headers })).rejects.toThrow(
        'keel: `headers["x-a"]` must be a valid header',
      );
      expect(() => createClient({ baseURL: api.url, headers })).toThrow(RangeError);
      expect(api.requests.length).toBe(before);
    },
  );

  test('tab, latin1 and surrounding spaces are still sent', async () => {
    const client = createClient({ baseURL: api.url, retry: false });
    const before = api.requests.length;
    for (const value of ['a\tb', 'caf\xe9 \xff', ' padded ']) {
      await expect(
        client.get('/h', { headers: { 'x-a': value }, cache: false }),
      ).resolves.toMatchObject({
        status: 200,
      });
    }
    expect(api.requests.length).toBe(before + 3);
  });
});

describe('a Retry-After that is no HTTP date, though Date.parse reads one', () => {
  // `soon 5` reads as 2001-05-01 (in the past: a wait of 0), `x 2030` as 2030-01-01.
  test('a GET backs off as for any unparsable value, rather than retrying at once', async () => {
    for (const value of ['soon 5', 'x 2030']) {
      const clock = new FakeClock();
      const fake = createFakeFetch({
        handler: () => new Response('busy', { status: 503, headers: { 'retry-after': value } }),
      });
      const client = createClient({
        baseURL: 'https://api.test',
        fetch: fake.fetch,
        clock,
        retry: { jitter: false, baseDelay: 100 },
      });
      const outcome = settle(client.get('/x'));
      await clock.runAll();
      expect((await outcome).state).toBe('rejected');
      expect(fake.calls).toHaveLength(3);
      expect(clock.history.map((t) => t.ms)).toEqual([100, 200]);
    }
  });

  test('a POST answered 503 with it is sent once: the server did not say it left it unprocessed', async () => {
    const clock = new FakeClock();
    const fake = createFakeFetch({
      handler: () => new Response('busy', { status: 503, headers: { 'retry-after': 'soon 5' } }),
    });
    const client = createClient({ baseURL: 'https://api.test', fetch: fake.fetch, clock });
    const outcome = await settle(client.post('/x', { a: 1 }));
    await clock.runAll();
    expect(outcome.state === 'rejected' && outcome.reason).toBeInstanceOf(HttpError);
    expect(fake.calls).toHaveLength(1);
  });
});

/** A FakeClock whose `now()` the test can step (an NTP correction, a VM resumed): timers keep their course. */
function steppingClock(): Clock & { fake: FakeClock; step(ms: number): void } {
  const fake = new FakeClock();
  let offset = 0;
  return {
    fake,
    now: () => fake.now() + offset,
    setTimeout: fake.setTimeout,
    clearTimeout: fake.clearTimeout,
    step(ms) {
      offset += ms;
    },
  };
}

describe('the injected clock stepping back', () => {
  test('a cached entry is not fresh from a time before it was stored: it is read again', async () => {
    const clock = steppingClock();
    const fake = createFakeFetch({ handler: (call) => jsonResponse(call.index) });
    const client = createClient({
      baseURL: 'https://api.test',
      fetch: fake.fetch,
      clock,
      cache: { ttl: 1000 },
    });
    expect((await client.get('/x')).data).toBe(0);
    await clock.fake.advance(500);
    expect((await client.get('/x')).data).toBe(0);
    // An hour back: its ttl of 1 s must not last an hour.
    clock.step(-3_600_000);
    await clock.fake.advance(5000);
    expect((await client.get('/x')).data).toBe(1);
    expect(fake.calls).toHaveLength(2);
    // Stored at the new time: fresh for its ttl from there.
    expect((await client.get('/x')).data).toBe(1);
  });

  test('an open circuit probes once resetTimeout has passed, not resetTimeout after the old time', async () => {
    const clock = steppingClock();
    let up = false;
    const fake = createFakeFetch({
      handler: () => (up ? jsonResponse('ok') : new Response('down', { status: 500 })),
    });
    const client = createClient({
      baseURL: 'https://api.test',
      fetch: fake.fetch,
      clock,
      retry: false,
      cache: false,
      circuitBreaker: { failureThreshold: 2, resetTimeout: 1000 },
    });
    await settle(client.get('/x'));
    await settle(client.get('/x'));
    expect(client.circuitBreaker().status('GET', '/x').state).toBe('open');
    clock.step(-3_600_000);
    up = true;
    await clock.fake.advance(2000);
    const probe = await settle(client.get('/x'));
    expect(probe.state === 'rejected' && probe.reason).not.toBeInstanceOf(CircuitOpenError);
    expect(probe.state).toBe('fulfilled');
    expect(client.circuitBreaker().status('GET', '/x').state).toBe('closed');
  });
});

describe('the injected clock stepping back, with a rate limit', () => {
  test('the budget frees an interval after the step, not once the clock catches up', async () => {
    const clock = steppingClock();
    const fake = createFakeFetch({ handler: () => jsonResponse('ok') });
    const client = createClient({
      baseURL: 'https://api.test',
      fetch: fake.fetch,
      clock,
      cache: false,
      scheduler: { rateLimit: { requests: 2, interval: 1000 } },
    });
    await client.get('/a');
    await client.get('/b');
    clock.step(-3_600_000);
    const third = settle(client.get('/c'));
    await clock.fake.advance(1000);
    expect((await Promise.race([third, Promise.resolve({ state: 'pending' })])).state).toBe(
      'fulfilled',
    );
    expect(fake.calls).toHaveLength(3);
    // The rate still holds from the new time: two per interval (/c and /d in this one; the
    // starts shown in the future counted as starts at the step, so /c waited for them).
    const more = [settle(client.get('/d')), settle(client.get('/e')), settle(client.get('/f'))];
    await clock.fake.advance(0);
    expect(fake.calls).toHaveLength(4);
    await clock.fake.advance(999);
    expect(fake.calls).toHaveLength(4);
    await clock.fake.advance(1);
    expect(fake.calls).toHaveLength(6);
    await clock.fake.runAll();
    for (const m of more) expect((await m).state).toBe('fulfilled');
    expect(clock.fake.live).toBe(0);
  });
});

describe('a fetch that resolves with a network-error Response (Response.error())', () => {
  // What a mock often returns to stand for a failed connection; fetch itself rejects instead.
  test('is a NetworkError: a GET is retried, a POST is not, and the circuit counts it', async () => {
    const clock = new FakeClock();
    const fake = createFakeFetch({ handler: () => Response.error() });
    const client = createClient({
      baseURL: 'https://api.test',
      fetch: fake.fetch,
      clock,
      retry: { jitter: false, baseDelay: 100 },
      circuitBreaker: { failureThreshold: 10 },
    });
    const get = settle(client.get('/x'));
    await clock.runAll();
    const outcome = await get;
    expect(outcome.state === 'rejected' && outcome.reason).toBeInstanceOf(NetworkError);
    expect(outcome.state === 'rejected' && outcome.reason).toMatchObject({ code: 'ERR_NETWORK' });
    expect((outcome as { reason: NetworkError }).reason.cause).toBeInstanceOf(Response);
    expect(fake.calls).toHaveLength(3);
    expect(client.circuitBreaker().status('GET', '/x').consecutiveFailures).toBe(1);
    const post = settle(client.post('/x', { a: 1 }));
    await clock.runAll();
    expect((await post).state).toBe('rejected');
    expect(fake.calls).toHaveLength(4);
  });
});
