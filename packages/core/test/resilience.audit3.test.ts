/**
 * Resilience audit, round 3: a cancel made while a flight's `request` or `retry` event is being
 * delivered reaches listeners after that event; a request made from a `circuit-half-open` listener
 * joins the probe; `timeout`, `deadline` and `maxResponseBytes` are checked alike on the client
 * and on a request.
 */
import { describe, expect, test } from 'vitest';
import { CancelledError, createClient } from '../src/index';
import { harness, outcome, probeReady } from './circuit.fixture';
import { debugOf, makeClient } from './helpers';

describe('a cancel made while the `request` event is being delivered', () => {
  test('reaches a later listener after the `request` it ends', async () => {
    const h = harness();
    h.answer('/a', 'hang');
    const seen: string[] = [];
    h.client.on('request', () => h.client.cancelAll());
    // Registered after the cancelling listener: it must hear of the request before its end.
    h.client.on('request', () => seen.push('request'));
    h.client.on('cancel', (e) => seen.push(`cancel final=${e.final}`));
    const p = h.client.get('/a');
    expect((await outcome(p)) as { error: unknown }).toMatchObject({
      error: expect.any(CancelledError),
    });
    expect(seen).toEqual(['request', 'cancel final=true']);
    expect(h.callsTo('/a')).toHaveLength(0);
    expect(debugOf(h.client)).toMatchObject({ flights: 0, inflight: 0 });
    expect(h.client.intelligence().snapshot().summary.activeRequests).toBe(0);
  });

  test("a caller's signal aborted from a request listener, in a flight started from another's", async () => {
    const h = harness();
    h.answer('/a', 'hang');
    h.answer('/b', 'hang');
    const ac = new AbortController();
    const seen: string[] = [];
    let inner: Promise<unknown> | undefined;
    // /a's request listener starts /b; /b's aborts /a's caller while /a is still being announced.
    h.client.on('request', (e) => {
      if (e.key.endsWith('/a')) inner = h.client.get('/b');
      else ac.abort();
    });
    h.client.on('request', (e) => seen.push(`request ${e.key.slice(-2)}`));
    h.client.on('cancel', (e) => seen.push(`cancel ${e.key.slice(-2)}`));
    const p = h.client.get('/a', { signal: ac.signal });
    expect((await outcome(p)) as { error: unknown }).toMatchObject({
      error: expect.any(CancelledError),
    });
    // /a's request reached every listener before /b's (made while it was being delivered), and
    // only then /a's end.
    expect(seen).toEqual(['request /a', 'request /b', 'cancel /a']);
    h.client.cancelAll();
    await outcome(inner!);
    expect(debugOf(h.client)).toMatchObject({ flights: 0, inflight: 0 });
  });
});

describe('a cancel made while a `retry` event is being delivered', () => {
  test('reaches a later listener after that `retry`', async () => {
    const h = harness({ retry: { attempts: 3, baseDelay: 100, jitter: false } });
    h.answer('/a', 503);
    const seen: string[] = [];
    h.client.on('retry', () => h.client.cancelAll());
    h.client.on('retry', () => seen.push('retry'));
    h.client.on('cancel', (e) => seen.push(`cancel final=${e.final}`));
    const p = h.client.get('/a');
    expect((await outcome(p)) as { error: unknown }).toMatchObject({
      error: expect.any(CancelledError),
    });
    expect(seen).toEqual(['retry', 'cancel final=true']);
    expect(h.callsTo('/a')).toHaveLength(1);
    expect(h.clock.live).toBe(0);
    expect(debugOf(h.client)).toMatchObject({ flights: 0, inflight: 0 });
    expect(h.client.intelligence().snapshot().summary.activeRequests).toBe(0);
  });
});

describe('circuit: a request made from a circuit-half-open listener', () => {
  test('joins the probe: no CircuitOpenError, no second call (rule 7)', async () => {
    const h = await probeReady();
    let inside: Promise<unknown> | undefined;
    const off = h.client.on('circuit-half-open', () => {
      inside = h.client.get('/a');
    });
    const probe = h.client.get('/a');
    off();
    expect(h.count('dedup')).toBe(1);
    expect(h.count('circuit-rejected')).toBe(0);
    expect(h.client.circuitBreaker().status('GET', '/a')).toMatchObject({
      state: 'halfOpen',
      probing: true,
    });
    h.fake.last().json({ ok: true });
    expect((await outcome(probe)).ok).toBe(true);
    expect((await outcome(inside!)).ok).toBe(true);
    expect(h.callsTo('/a')).toHaveLength(4);
    expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('closed');
    expect(debugOf(h.client)).toMatchObject({ flights: 0, inflight: 0 });
  });

  test('cancelAll from it: `request` reaches the listeners before the final `cancel`, and the next request probes at once', async () => {
    const h = await probeReady();
    const off = h.client.on('circuit-half-open', () => h.client.cancelAll());
    const probe = h.client.get('/a');
    off();
    expect((await outcome(probe)) as { error: unknown }).toMatchObject({
      error: expect.any(CancelledError),
    });
    const tail = h.names().slice(-3);
    expect(tail).toEqual(['circuit-half-open', 'request', 'cancel']);
    expect(h.callsTo('/a')).toHaveLength(3);
    expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('open');
    // The cancelled probe gave its slot back: the next request is the probe, without waiting.
    h.answer('/a', 200);
    expect((await outcome(h.client.get('/a'))).ok).toBe(true);
    expect(h.client.circuitBreaker().status('GET', '/a').state).toBe('closed');
    expect(debugOf(h.client)).toMatchObject({ flights: 0, inflight: 0 });
  });
});

describe('timeout, deadline and maxResponseBytes: null is refused alike on the client and on a request', () => {
  for (const name of ['timeout', 'deadline', 'maxResponseBytes'] as const) {
    test(`${name}: null`, async () => {
      const onClient = (() => {
        try {
          createClient({ fetch: async () => new Response('{}'), [name]: null as never });
        } catch (err) {
          return err;
        }
        return undefined;
      })();
      const { client } = makeClient();
      const onRequest = (await outcome(client.get('/x', { [name]: null as never }))) as {
        error: unknown;
      };
      expect(onRequest.error).toBeInstanceOf(TypeError);
      expect(onClient).toBeInstanceOf(TypeError);
      expect((onClient as Error).message).toBe((onRequest.error as Error).message);
      expect((onClient as Error).message).toContain(`\`${name}\``);
    });
  }
});

describe('request-only and shared options: null is refused on a request as its type says', () => {
  test('baseURL: null is a TypeError on a request as on the client', async () => {
    const onClient = (() => {
      try {
        createClient({ fetch: async () => new Response('{}'), baseURL: null as never });
      } catch (err) {
        return err;
      }
      return undefined;
    })();
    const { client, fake } = makeClient();
    const onRequest = (await outcome(
      client.get('https://other.test/x', { baseURL: null as never }),
    )) as { error: unknown };
    expect(onClient).toBeInstanceOf(TypeError);
    expect(onRequest.error).toBeInstanceOf(TypeError);
    expect((onRequest.error as Error).message).toBe((onClient as Error).message);
    expect(fake.calls).toHaveLength(0);
  });

  test('priority: null is a TypeError naming `priority`', async () => {
    const { client, fake } = makeClient({ scheduler: { priority: true } });
    const out = (await outcome(client.get('/x', { priority: null as never }))) as {
      error: unknown;
    };
    expect(out.error).toBeInstanceOf(TypeError);
    expect((out.error as Error).message).toContain('`priority`');
    expect(fake.calls).toHaveLength(0);
  });
});

describe('scheduler: a job cancelled by a listener of its own event', () => {
  test('from request-dequeued: no request-started after its request-rejected, and its slot is free', async () => {
    const { client, fake, events } = makeClient({ scheduler: { concurrency: 1 } });
    let p: ReturnType<typeof client.get> | undefined;
    const off = client.on('request-dequeued', () => p?.cancel());
    p = client.get('/a', { priority: 'low' });
    // The first job starts at once (dequeued before p is assigned); the second waits its turn.
    const second = client.get('/b');
    const cancelled = p;
    p = second;
    fake.last().json({ ok: 1 });
    expect((await outcome(cancelled)).ok).toBe(true);
    expect((await outcome(second)) as { error: unknown }).toMatchObject({
      error: expect.any(CancelledError),
    });
    off();
    const ofB = events
      .filter((e) => (e.payload as { key?: string }).key?.endsWith('/b'))
      .map((e) => e.name);
    expect(ofB).toEqual([
      'request',
      'request-queued',
      'request-dequeued',
      'cancel',
      'request-rejected',
    ]);
    expect(client.scheduler().stats()).toMatchObject({ active: 0, queued: 0, delayed: 0 });
    expect(fake.calls).toHaveLength(1);
  });
});
