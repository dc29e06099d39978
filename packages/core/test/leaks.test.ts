import { describe, expect, test } from 'vitest';
import { MAX_PROFILES } from '../src/adaptive/engine';
import { MAX_CIRCUITS } from '../src/circuit/breaker';
import { type CancellablePromise, createClient } from '../src/index';
import { MAX_ENDPOINTS } from '../src/intelligence/intelligence';
import {
  debugOf,
  FakeClock,
  flush,
  makeClient,
  type PromiseState,
  quickResponse,
  settle,
  spiedSignal,
  track,
} from './helpers';

describe('leaks', () => {
  test('after 10,000 mixed requests: no timers, no caller-signal listeners, no in-flight entries', async () => {
    const retried = new Set<string>();
    const t = makeClient(
      { cache: { ttl: 50 }, retry: { attempts: 2, baseDelay: 5 } },
      {
        handler: (call) => {
          const path = new URL(call.url).pathname;
          const kind = path.split('/')[1];
          switch (kind) {
            case 'retry':
              if (retried.has(path)) return Response.json('ok');
              retried.add(path);
              return new Response('', { status: 503, headers: { 'retry-after': '0' } });
            case 'retryw':
              return new Response('', { status: 503 });
            case 'err':
              return new Response('', { status: 404 });
            case 'slow':
            case 'sig':
            case 'pending':
              return undefined; // answered only by an abort / timeout
            case 'stream':
              return new Response(new ReadableStream({ start() {} }), {
                headers: { 'content-type': 'application/json' },
              });
            default:
              return Response.json({ path });
          }
        },
      },
    );
    const { client, clock } = t;
    const outcomes: { current: PromiseState<unknown> }[] = [];
    const signals: ReturnType<typeof spiedSignal>[] = [];
    const toAbort: AbortController[] = [];
    const key = client.resolve('GET', '/sub/1').key;
    const offSub = client.subscribe(key, () => {});

    const TOTAL = 10_000;
    const BATCH = 500;
    for (let start = 0; start < TOTAL; start += BATCH) {
      const cancelLater: CancellablePromise<unknown>[] = [];
      for (let i = start; i < start + BATCH; i++) {
        let p: CancellablePromise<unknown>;
        switch (i % 12) {
          case 0: // cache hits (and refetches after expiry)
            p = client.get(`/hit/${i % 7}`);
            break;
          case 1: // joins
            p = client.get(`/join/${Math.floor(i / 48)}`, { cache: false });
            break;
          case 2: // retry after 503
            p = client.get(`/retry/${i}`);
            break;
          case 3: // timeouts, retried, then TimeoutError
            p = client.get(`/slow/${i}`, { timeout: 3 });
            break;
          case 4: {
            // a joiner cancelled at once, and an owner cancelled later
            p = client.get(`/join/${Math.floor(i / 48)}`, { cache: false });
            p.cancel();
            const q = client.get(`/pending/${i}`);
            outcomes.push(track(q));
            cancelLater.push(q);
            break;
          }
          case 5: {
            // a caller signal aborted mid-flight
            const s = spiedSignal();
            signals.push(s);
            toAbort.push(s.controller);
            p = client.get(`/sig/${i}`, { signal: s.signal });
            break;
          }
          case 6: {
            // a caller signal that never aborts, on a successful mutation
            const s = spiedSignal();
            signals.push(s);
            p = client.post(`/m/${i % 3}`, { i }, { signal: s.signal });
            break;
          }
          case 7: {
            // a signal aborted during a retry wait
            const s = spiedSignal();
            signals.push(s);
            p = client.get(`/retryw/${i}`, { signal: s.signal, retry: { baseDelay: 1000 } });
            toAbort.push(s.controller);
            break;
          }
          case 8:
            p = client.get(`/err/${i}`);
            break;
          case 9: {
            // aborted during body parsing
            const s = spiedSignal();
            signals.push(s);
            p = client.get(`/stream/${i}`, { signal: s.signal });
            toAbort.push(s.controller);
            break;
          }
          case 10: {
            // an already-aborted signal
            const s = spiedSignal();
            s.controller.abort();
            signals.push(s);
            p = client.get(`/hit/${i % 7}`, { signal: s.signal });
            break;
          }
          default:
            // invalidation with a subscribed key refetching, and stale-while-revalidate reads
            if (i % 48 === 11) client.invalidate('/sub');
            p = client.get(`/sub/${i % 2}`, { cache: { strategy: 'stale-while-revalidate' } });
        }
        outcomes.push(track(p));
      }
      await flush();
      await clock.advance(10);
      for (const c of toAbort.splice(0)) c.abort();
      for (const p of cancelLater) p.cancel();
      await clock.advance(100);
    }
    offSub();
    await clock.runAll();
    await flush();

    const pending = outcomes.filter((o) => o.current.state === 'pending');
    expect(pending).toHaveLength(0);
    expect(outcomes.length).toBeGreaterThanOrEqual(TOTAL);
    expect(outcomes.some((o) => o.current.state === 'fulfilled')).toBe(true);
    expect(clock.live).toBe(0);
    expect(clock.cleared).toBeGreaterThan(0); // retry waits and timeouts were cut short
    expect(signals.reduce((n, s) => n + s.live(), 0)).toBe(0);
    expect(debugOf(client)).toMatchObject({ flights: 0, inflight: 0, subscriptions: 0 });
    expect(t.fake.pending().every((c) => c.signal?.aborted)).toBe(true);
    // every kind of event happened, so the run exercised the paths it claims to
    for (const name of [
      'cache-hit',
      'dedup',
      'retry',
      'cancel',
      'error',
      'revalidate',
      'invalidate',
    ] as const) {
      expect(t.of(name).length, name).toBeGreaterThan(0);
    }
  }, 60_000);

  test('ids in paths: every feature keeps bounded per-endpoint state, and nothing is left live', async () => {
    // 3,000 ids, answered 429 and 503 in turn (so each leaves state: a failure counted, a
    // throttle), each in its own group, through every feature.
    const clock = new FakeClock();
    let n = 0;
    const client = createClient({
      baseURL: 'https://api.test',
      clock,
      cache: { enabled: false },
      retry: { attempts: 2, baseDelay: 10, jitter: false },
      circuitBreaker: { failureThreshold: 2, resetTimeout: 1000 },
      scheduler: {
        concurrency: 4,
        priority: true,
        hosts: { 'api.test': 3 },
        rateLimit: { requests: 1000, interval: 10 },
      },
      adaptive: {
        enabled: true,
        concurrency: true,
        rateLimit: true,
        retry: true,
        staleWhileRevalidate: true,
        outcomeWindow: 2,
        latencyWindow: 4,
        degradeSamples: 1,
        changeCooldown: 0,
      },
      fetch: async () => quickResponse([429, 503][n++ % 2]!, {}),
    });
    const priorities = ['high', 'normal', 'low'] as const;
    // In batches, so each id's outcome lands before most of the later ids are seen.
    for (let batch = 0; batch < 30; batch++) {
      const calls: Promise<unknown>[] = [];
      for (let i = 0; i < 100; i++) {
        const id = batch * 100 + i;
        const options = { scheduler: { group: `g${id}` }, priority: priorities[id % 3] };
        calls.push(settle(client.get(`/users/${id}`, options)), settle(client.get(`/users/${id}`)));
      }
      for (let k = 0; k < 10; k++) await clock.advance(20);
      await Promise.all(calls);
    }
    // A few over the cap at most (each eviction scan is bounded); 2,673 were kept before.
    expect(client.circuitBreaker().statuses().length).toBeLessThan(MAX_CIRCUITS + 100);
    expect(client.intelligence().snapshot().endpoints.length).toBeLessThanOrEqual(MAX_ENDPOINTS);
    const profiles = Object.keys(client.adaptive().snapshot().endpoints).length;
    expect(profiles).toBeLessThanOrEqual(MAX_PROFILES);
    expect(client.scheduler().stats()).toMatchObject({ active: 0, queued: 0, delayed: 0 });
    expect(debugOf(client)).toMatchObject({ flights: 0, inflight: 0, adaptiveFlights: 0 });
    expect(clock.live).toBe(0);
  });
});
