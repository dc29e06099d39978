import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { type CancellablePromise, CancelledError, HttpError, TimeoutError } from '../src/index';
import { debugOf, flush, makeClient, type PromiseState, spiedSignal, track } from './helpers';

type Op =
  | { op: 'get'; path: number; signal: boolean; timeout: boolean }
  | { op: 'post'; path: number }
  | { op: 'cancel'; which: number }
  | { op: 'abort'; which: number }
  | { op: 'respond'; which: number; status: 200 | 404 | 503 }
  | { op: 'advance'; ms: number }
  | { op: 'invalidate'; path: number }
  | { op: 'subscribe'; path: number }
  | { op: 'cancelAll' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant('get' as const),
      path: fc.nat(2),
      signal: fc.boolean(),
      timeout: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('post' as const), path: fc.nat(2) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('cancel' as const), which: fc.nat(40) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('abort' as const), which: fc.nat(40) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant('respond' as const),
      which: fc.nat(40),
      status: fc.constantFrom(200 as const, 404 as const, 503 as const),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('advance' as const),
      ms: fc.integer({ min: 1, max: 400 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('invalidate' as const), path: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('subscribe' as const), path: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.constant({ op: 'cancelAll' as const }) },
);

describe('properties of the pipeline', () => {
  test('random interleavings of joins, cancels, aborts, answers and invalidations never leave anything pending', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 30 }), async (ops) => {
        const t = makeClient({ cache: { ttl: 100 }, retry: { attempts: 2 } });
        const callers: {
          p: CancellablePromise<unknown>;
          state: { current: PromiseState<unknown> };
          abort?: () => void;
        }[] = [];
        const signals: ReturnType<typeof spiedSignal>[] = [];
        const offs: (() => void)[] = [];
        for (const o of ops) {
          switch (o.op) {
            case 'get': {
              const s = o.signal ? spiedSignal() : undefined;
              if (s) signals.push(s);
              const p = t.client.get(`/p/${o.path}`, {
                signal: s?.signal,
                timeout: o.timeout ? 50 : undefined,
              });
              callers.push({
                p,
                state: track(p),
                abort: s ? () => s.controller.abort() : undefined,
              });
              break;
            }
            case 'post': {
              const p = t.client.post(`/p/${o.path}`, { x: 1 });
              callers.push({ p, state: track(p) });
              break;
            }
            case 'cancel':
              callers[o.which % Math.max(1, callers.length)]?.p.cancel();
              break;
            case 'abort':
              callers[o.which % Math.max(1, callers.length)]?.abort?.();
              break;
            case 'respond': {
              const open = t.fake.pending();
              const call = open[o.which % Math.max(1, open.length)];
              call?.respond(
                o.status === 200
                  ? Response.json({ i: call.index })
                  : new Response('', { status: o.status }),
              );
              break;
            }
            case 'advance':
              await t.clock.advance(o.ms);
              break;
            case 'invalidate':
              t.client.invalidate(`/p/${o.path}`);
              break;
            case 'subscribe':
              offs.push(t.client.subscribe(t.client.resolve('GET', `/p/${o.path}`).key, () => {}));
              break;
            case 'cancelAll':
              t.client.cancelAll();
              break;
          }
          await flush();
        }
        for (const off of offs) off();
        t.client.cancelAll();
        await t.clock.runAll();
        await flush();

        for (const c of callers) {
          expect(c.state.current.state).not.toBe('pending');
          if (c.state.current.state === 'rejected') {
            const r = c.state.current.reason;
            expect(
              r instanceof CancelledError || r instanceof HttpError || r instanceof TimeoutError,
            ).toBe(true);
          }
        }
        expect(t.clock.live).toBe(0);
        expect(signals.reduce((n, s) => n + s.live(), 0)).toBe(0);
        expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0, subscriptions: 0 });
        // every fetch still open was aborted, so nothing keeps a socket busy
        expect(t.fake.pending().every((c) => c.signal?.aborted)).toBe(true);
      }),
      { numRuns: 150 },
    );
  }, 60_000);

  test('joiners that are not cancelled all see the outcome of the one fetch', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
        fc.constantFrom(200, 404),
        async (n, cancelMask, status) => {
          const t = makeClient({ retry: { attempts: 1 } });
          const ps = Array.from({ length: n }, () => t.client.get('/same'));
          const states = ps.map((p) => track(p));
          ps.forEach((p, i) => {
            if (cancelMask[i]) p.cancel();
          });
          const call = t.fake.calls[0]!;
          call.respond(status === 200 ? Response.json('v') : new Response('', { status }));
          await flush();
          expect(t.fake.calls).toHaveLength(1);
          const kept = states.filter((_, i) => !cancelMask[i]);
          const cancelled = states.filter((_, i) => cancelMask[i]);
          for (const s of cancelled) {
            expect(s.current.state).toBe('rejected');
            expect((s.current as { reason: unknown }).reason).toBeInstanceOf(CancelledError);
          }
          if (kept.length === 0) {
            expect(call.signal?.aborted).toBe(true);
            return;
          }
          expect(call.signal?.aborted).toBe(false);
          const first = kept[0]!.current;
          for (const s of kept) {
            expect(s.current.state).toBe(status === 200 ? 'fulfilled' : 'rejected');
            const got = s.current as { value?: unknown; reason?: unknown };
            const want = first as { value?: unknown; reason?: unknown };
            expect(got.value).toBe(want.value);
            expect(got.reason).toBe(want.reason);
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});
