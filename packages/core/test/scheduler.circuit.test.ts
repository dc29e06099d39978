import { describe, expect, it } from 'vitest';
import { CircuitOpenError } from '../src/index';
import { jsonResponse, settle } from './helpers';
import { answer, answerAll, calls, schedulerClient, timeline } from './scheduler.helpers';

const breaker = { circuitBreaker: { failureThreshold: 1, resetTimeout: 1000 } };

describe('scheduler: pre-start circuit gate', () => {
  it('rejects a queued job with CircuitOpenError when its circuit opened while it waited', async () => {
    const t = schedulerClient({ concurrency: 1 }, { ...breaker, retry: { attempts: 1 } });
    const a = settle(t.client.get('/cb/x?n=a'));
    const b = settle(t.client.get('/cb/x?n=b')); // same endpoint, admitted while closed, queued
    const c = t.client.get('/other');
    await answer(t, '/cb/x?n=a', jsonResponse({}, { status: 500 }));
    expect(t.of('circuit-open')).toHaveLength(1);

    const rb = await b;
    expect(rb.state).toBe('rejected');
    expect((rb as { reason: unknown }).reason).toBeInstanceOf(CircuitOpenError);
    expect((rb as { reason: CircuitOpenError }).reason.endpoint).toBe('GET /cb/x');
    // No attempt for b; the slot went to c.
    expect(calls(t)).toEqual(['/cb/x?n=a', '/other']);
    expect(timeline(t).filter((l) => l.endsWith('n=b'))).toEqual([
      'request-queued /cb/x?n=b',
      'request-dequeued /cb/x?n=b',
    ]);
    // Blocked by the open circuit (`circuit-rejected`); the flight had started (`request`), so
    // it also ends with its terminal `error`, in that order.
    const bKey = t.client.resolve('GET', '/cb/x?n=b').key;
    expect(t.of('error').filter((e) => e.key === bKey)).toEqual([
      expect.objectContaining({ error: expect.any(CircuitOpenError), endpoint: 'GET /cb/x' }),
    ]);
    expect(t.of('circuit-rejected')).toEqual([
      {
        endpoint: 'GET /cb/x',
        method: 'GET',
        path: '/cb/x',
        error: (rb as { reason: unknown }).reason,
      },
    ]);
    const names = t.events.map((e) => e.name);
    expect(names.indexOf('circuit-rejected')).toBeLessThan(names.lastIndexOf('error'));
    // Intelligence counts b once: a request that was refused, not a failure.
    expect(t.client.intelligence().endpoint('GET', '/cb/x')).toMatchObject({
      requests: 2,
      failures: 1,
      circuitRejected: 1,
    });
    // a completed; b dropped by the scheduler at its gate: rejected (no request-rejected).
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, completed: 1, rejected: 1 });
    await answerAll(t);
    expect((await a).state).toBe('rejected');
    expect((await c).status).toBe(200);
  });

  it('lets the half-open probe through even though the circuit does not permit others', async () => {
    const t = schedulerClient({ concurrency: 1 }, { ...breaker, retry: { attempts: 1 } });
    const a = settle(t.client.get('/cb/y?n=a'));
    await answer(t, '/cb/y?n=a', jsonResponse({}, { status: 503 }));
    await a;
    t.client.get('/slow'); // occupies the slot
    await t.clock.advance(1000);
    const probe = t.client.get('/cb/y?n=probe'); // becomes the probe, waits for the slot
    expect(t.of('circuit-half-open')).toHaveLength(1);
    expect(t.of('request').at(-1)).toMatchObject({ probe: true });
    const other = await settle(t.client.get('/cb/y?n=other')); // refused at admission
    expect((other as { reason: unknown }).reason).toBeInstanceOf(CircuitOpenError);
    expect(t.client.scheduler().stats()).toMatchObject({ active: 1, queued: 1 });
    await answer(t, '/slow');
    expect(calls(t).at(-1)).toBe('/cb/y?n=probe');
    await answer(t, '/cb/y?n=probe');
    expect((await probe).status).toBe(200);
    expect(t.of('circuit-closed')).toHaveLength(1);
  });

  it('rejects a retry that waits while its circuit opens', async () => {
    const t = schedulerClient(
      { concurrency: 2 },
      { circuitBreaker: { failureThreshold: 1, resetTimeout: 60_000 }, retry: { attempts: 3 } },
    );
    const retrying = settle(t.client.get('/cb/z?n=1'));
    const failing = settle(t.client.get('/cb/z?n=2', { retry: false }));
    await answer(t, '/cb/z?n=1', jsonResponse({}, { status: 503 })); // parked for backoff
    await answer(t, '/cb/z?n=2', jsonResponse({}, { status: 500 })); // opens the circuit
    expect(t.of('circuit-open')).toHaveLength(1);
    await t.clock.advance(100);
    const r = await retrying;
    expect((r as { reason: unknown }).reason).toBeInstanceOf(CircuitOpenError);
    expect(t.fake.calls).toHaveLength(2);
    await failing;
    expect(t.client.scheduler().stats()).toMatchObject({
      active: 0,
      delayed: 0,
      completed: 1,
      rejected: 1,
    });
  });

  it('a job whose deadline runs out in the queue, before any attempt, is no failure of its endpoint', async () => {
    // The local queue is full (one slot, held by /slow): /fast never got a request.
    const t = schedulerClient(
      { concurrency: 1 },
      { circuitBreaker: { failureThreshold: 2, resetTimeout: 1000 }, retry: { attempts: 1 } },
    );
    t.client.get('/slow');
    const queued = [1, 2, 3].map((i) => settle(t.client.get(`/fast?n=${i}`, { deadline: 100 })));
    await t.clock.advance(100);
    for (const r of await Promise.all(queued)) {
      expect((r as { reason: { kind?: string } }).reason.kind).toBe('deadline');
    }
    expect(calls(t)).toEqual(['/slow']);
    expect(t.of('circuit-open')).toEqual([]);
    expect(t.client.circuitBreaker().status('GET', '/fast')).toMatchObject({
      state: 'closed',
      consecutiveFailures: 0,
    });
  });

  it('a half-open probe whose deadline runs out in the queue gives its turn back', async () => {
    const t = schedulerClient({ concurrency: 1 }, { ...breaker, retry: { attempts: 1 } });
    const a = settle(t.client.get('/cb/p?n=a'));
    await answer(t, '/cb/p?n=a', jsonResponse({}, { status: 503 }));
    await a;
    const openedAt = t.client.circuitBreaker().status('GET', '/cb/p').openedAt;
    t.client.get('/slow'); // occupies the slot
    await t.clock.advance(1000);
    const probe = settle(t.client.get('/cb/p?n=probe', { deadline: 100 }));
    expect(t.of('circuit-half-open')).toHaveLength(1);
    await t.clock.advance(100);
    expect((await probe).state).toBe('rejected');
    // It never reached the endpoint: the window is not restarted, the next request probes.
    expect(t.of('circuit-open')).toHaveLength(1);
    expect(t.client.circuitBreaker().status('GET', '/cb/p')).toMatchObject({
      state: 'open',
      openedAt,
    });
    const next = t.client.get('/cb/p?n=next');
    expect(t.of('circuit-half-open')).toHaveLength(2);
    await answer(t, '/slow');
    await answer(t, '/cb/p?n=next');
    expect((await next).status).toBe(200);
    expect(t.client.circuitBreaker().status('GET', '/cb/p').state).toBe('closed');
  });
});
