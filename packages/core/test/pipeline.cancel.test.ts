import { describe, expect, test } from 'vitest';
import { CancelledError, isAbortError, TimeoutError } from '../src/index';
import { debugOf, flush, makeClient, spiedSignal, track } from './helpers';

const never = () =>
  new Response(new ReadableStream({ start() {} }), {
    headers: { 'content-type': 'application/json' },
  });

describe('cancellation', () => {
  test('cancel() rejects with CancelledError and aborts the fetch at once', async () => {
    const t = makeClient();
    const p = t.client.get('/c');
    const signal = t.fake.last().signal!;
    p.cancel();
    expect(signal.aborted).toBe(true);
    const err = await p.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CancelledError);
    expect(isAbortError(err)).toBe(true);
    await flush();
    expect(t.of('cancel')).toEqual([
      expect.objectContaining({ key: t.client.resolve('GET', '/c').key, final: true }),
    ]);
    expect(t.of('error')).toHaveLength(0);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
  });

  test('cancel() twice, or after settling, is harmless', async () => {
    const t = makeClient({}, { handler: () => new Response('ok') });
    const p = t.client.get('/twice', { cache: false });
    await p;
    p.cancel();
    const q = t.client.get('/twice2', { cache: false });
    q.cancel();
    q.cancel();
    await expect(q).rejects.toBeInstanceOf(CancelledError);
    expect(t.of('cancel')).toHaveLength(1);
  });

  test('cancelAll() rejects every pending request, reads and mutations, and aborts their fetches', async () => {
    const t = makeClient();
    const ps = [
      t.client.get('/a'),
      t.client.get('/a'),
      t.client.get('/b'),
      t.client.post('/c', { x: 1 }),
      t.client.delete('/d'),
    ];
    expect(t.fake.calls).toHaveLength(4);
    t.client.cancelAll();
    const results = await Promise.allSettled(ps);
    expect(
      results.every((r) => r.status === 'rejected' && r.reason instanceof CancelledError),
    ).toBe(true);
    expect(t.fake.calls.every((c) => c.signal?.aborted)).toBe(true);
    await flush();
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
    expect(t.of('cancel').filter((c) => c.final)).toHaveLength(4);
  });

  test('cancelAll() during a retry wait cancels the wait', async () => {
    const t = makeClient({}, { handler: () => new Response('', { status: 503 }) });
    const p = track(t.client.get('/wait'));
    await flush();
    expect(t.clock.live).toBe(1); // the retry wait
    t.client.cancelAll();
    await flush();
    expect((p.current as { reason: unknown }).reason).toBeInstanceOf(CancelledError);
    expect(t.clock.live).toBe(0);
    await t.clock.advance(10_000);
    expect(t.fake.calls).toHaveLength(1);
  });

  test('an already-aborted signal rejects at once without fetching', async () => {
    const t = makeClient({}, { handler: () => new Response('x') });
    const controller = new AbortController();
    controller.abort(new Error('reason'));
    const err = await t.client.get('/pre', { signal: controller.signal }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CancelledError);
    expect((err as Error).cause).toBeInstanceOf(Error);
    expect(isAbortError(err)).toBe(true);
    expect(t.fake.calls).toHaveLength(0);
    // also when the response is cached
    await t.client.get('/pre');
    await expect(t.client.get('/pre', { signal: controller.signal })).rejects.toBeInstanceOf(
      CancelledError,
    );
    // and for mutations
    await expect(t.client.post('/pre', 1, { signal: controller.signal })).rejects.toBeInstanceOf(
      CancelledError,
    );
    expect(t.fake.calls).toHaveLength(1);
  });

  test('a signal that times out (AbortSignal.timeout) rejects with TimeoutError, not CancelledError', async () => {
    const t = makeClient();
    const controller = new AbortController();
    const p = t.client.get('/slow-caller', { signal: controller.signal });
    // What AbortSignal.timeout() aborts with.
    const reason = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    controller.abort(reason);
    const err = (await p.catch((e: unknown) => e)) as TimeoutError;
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toMatchObject({
      kind: 'signal',
      method: 'GET',
      url: 'https://api.test/slow-caller',
    });
    expect(err.cause).toBe(reason);
    expect(isAbortError(err)).toBe(false);
    expect(t.fake.last().signal?.aborted).toBe(true);

    const pre = new AbortController();
    pre.abort(reason);
    await expect(t.client.get('/pre-timeout', { signal: pre.signal })).rejects.toBeInstanceOf(
      TimeoutError,
    );
  });

  test('aborting the signal mid-flight rejects and aborts the fetch', async () => {
    const t = makeClient();
    const s = spiedSignal();
    const p = t.client.get('/mid', { signal: s.signal });
    expect(s.live()).toBe(1);
    s.controller.abort();
    await expect(p).rejects.toBeInstanceOf(CancelledError);
    expect(t.fake.last().signal?.aborted).toBe(true);
    expect(s.live()).toBe(0);
  });

  test('aborting the signal during a retry wait cancels the wait (no timer, no further fetch)', async () => {
    const t = makeClient({}, { handler: () => new Response('', { status: 503 }) });
    const s = spiedSignal();
    const p = track(t.client.get('/rw', { signal: s.signal }));
    await flush();
    expect(t.of('retry')).toHaveLength(1);
    expect(t.clock.live).toBe(1);
    s.controller.abort();
    await flush();
    expect((p.current as { reason: unknown }).reason).toBeInstanceOf(CancelledError);
    expect(t.clock.live).toBe(0);
    await t.clock.advance(60_000);
    expect(t.fake.calls).toHaveLength(1);
    expect(s.live()).toBe(0);
    expect(t.of('request')[0]!.tracker.state).toBe('cancelled');
  });

  test('aborting during body parsing rejects promptly', async () => {
    const t = makeClient({}, { handler: never });
    const s = spiedSignal();
    const p = track(t.client.get('/body', { signal: s.signal }));
    await flush();
    expect(t.fake.calls[0]!.done).toBe(true); // headers arrived, body still streaming
    expect(p.current.state).toBe('pending');
    s.controller.abort();
    await flush();
    expect((p.current as { reason: unknown }).reason).toBeInstanceOf(CancelledError);
    expect(t.fake.last().signal?.aborted).toBe(true);
  });

  test('cancel() during body parsing rejects promptly', async () => {
    const t = makeClient({}, { handler: never });
    const p = track(t.client.get('/body2'));
    await flush();
    (t.client as unknown as { cancelAll(): void }).cancelAll();
    await flush();
    expect((p.current as { reason: unknown }).reason).toBeInstanceOf(CancelledError);
  });

  test('a timeout during body parsing is a TimeoutError', async () => {
    const t = makeClient({ timeout: 30, retry: { attempts: 1 } }, { handler: never });
    const p = track(t.client.get('/body3'));
    await t.clock.advance(30);
    expect((p.current as { reason: unknown }).reason).toBeInstanceOf(TimeoutError);
  });

  test('a fetch that ignores its signal cannot keep a cancelled request pending', async () => {
    const t = makeClient({}, { ignoreAbort: true });
    const p = t.client.get('/deaf');
    p.cancel();
    await expect(p).rejects.toBeInstanceOf(CancelledError);
    await flush();
    expect(debugOf(t.client).flights).toBe(0);
    t.fake.last().json('too late'); // arrives after the cancel: ignored
    await flush();
    expect(t.of('success')).toHaveLength(0);
    expect(debugOf(t.client).cacheSize).toBe(0);
  });

  // A fetch deaf to its signal whose body streams for ever: the attempt ending while it is read
  // (a timeout, a cancel) must cancel the read, not download on. Also when the fetch read
  // `init.signal` (a polyfill's header wait) without tying the body to it: keel's reader kept
  // reading then, 100 MB in 2 s.
  test.each([
    [
      'a timeout',
      TimeoutError,
      (_p: { cancel(): void }, t: ReturnType<typeof makeClient>) => t.clock.advance(30),
      false,
    ],
    ['a cancel', CancelledError, (p: { cancel(): void }) => p.cancel(), false],
    [
      'a timeout (signal read)',
      TimeoutError,
      (_p: { cancel(): void }, t: ReturnType<typeof makeClient>) => t.clock.advance(30),
      true,
    ],
    ['a cancel (signal read)', CancelledError, (p: { cancel(): void }) => p.cancel(), true],
  ] as const)(
    'a body being read when %s ends the attempt is cancelled',
    async (_, type, end, reads) => {
      const cancelled: unknown[] = [];
      let pulls = 0;
      const body = new ReadableStream<Uint8Array>({
        // One chunk per pull, for ever (the reader asks for the next once it took one).
        pull: async (c) => {
          pulls++;
          await new Promise((r) => setTimeout(r, 1));
          c.enqueue(new TextEncoder().encode(' '));
        },
        cancel: (reason) => void cancelled.push(reason),
      });
      // The signal cannot stop it: never read, or read and not tied to the body.
      const fetch = async (_url: string, init: RequestInit) => {
        if (reads) void init.signal;
        return new Response(body, { headers: { 'content-type': 'text/plain' } });
      };
      const t = makeClient({ timeout: 30, retry: false, fetch });
      const request = t.client.get('/endless');
      const p = track(request);
      for (let i = 0; pulls < 3 && i < 100; i++) await new Promise((r) => setTimeout(r, 1));
      expect(pulls).toBeGreaterThanOrEqual(3);
      await end(request, t);
      await flush();
      expect((p.current as { reason: unknown }).reason).toBeInstanceOf(type);
      for (let i = 0; cancelled.length === 0 && i < 50; i++)
        await new Promise((r) => setTimeout(r, 1));
      expect(cancelled).toHaveLength(1);
      expect(cancelled[0]).toBeInstanceOf(type);
      const after = pulls;
      await new Promise((r) => setTimeout(r, 10));
      expect(pulls - after).toBeLessThanOrEqual(1);
    },
  );

  test('a cancel landing while the response is being finished never reports success after cancel', async () => {
    // Walks the cancel across every microtask between the fetch resolving and the caller resuming.
    for (let ticks = 0; ticks < 25; ticks++) {
      const t = makeClient({}, { handler: () => Response.json({ ok: true }) });
      const p = t.client.get(`/late-${ticks}`);
      const outcome = track(p);
      for (let i = 0; i < ticks; i++) await Promise.resolve();
      p.cancel();
      await flush();
      const names = t.events.map((e) => e.name);
      if (outcome.current.state === 'rejected') {
        expect((outcome.current as { reason: unknown }).reason).toBeInstanceOf(CancelledError);
        // once the flight was cancelled (final), no success / cache-write may follow
        const cancelAt = names.indexOf('cancel');
        expect(names.slice(cancelAt)).not.toContain('success');
        expect(names.slice(cancelAt)).not.toContain('cache-write');
        expect(t.of('request')[0]!.tracker.state).toBe('cancelled');
      } else {
        expect(outcome.current.state).toBe('fulfilled');
        expect(names).not.toContain('cancel');
      }
      expect(debugOf(t.client).flights).toBe(0);
    }
  });

  test('cancel rejects only the cancelled caller when several use different signals', async () => {
    const t = makeClient();
    const s1 = spiedSignal();
    const s2 = spiedSignal();
    const a = t.client.get('/sig', { signal: s1.signal });
    const b = t.client.get('/sig', { signal: s2.signal });
    s1.controller.abort();
    await expect(a).rejects.toBeInstanceOf(CancelledError);
    t.fake.last().json(1);
    await expect(b).resolves.toMatchObject({ data: 1 });
    expect(s1.live() + s2.live()).toBe(0);
  });

  test('a caller signal that never aborts has its listener removed on success and on error', async () => {
    const t = makeClient({ retry: { attempts: 1 } });
    const s = spiedSignal();
    const ok = t.client.get('/ok', { signal: s.signal });
    t.fake.last().json(1);
    await ok;
    const bad = t.client.get('/bad', { signal: s.signal });
    t.fake.last().respond(new Response('', { status: 500 }));
    await bad.catch(() => {});
    expect(s.live()).toBe(0);
  });
});

describe('the cancel payload', () => {
  // With the adaptive engine, whose observer finds the flight a joiner's final cancel ended by
  // an internal field of the same payload: still invisible to the app's listener.
  test.each([
    ['defaults', {}],
    ['the adaptive engine', { adaptive: { enabled: true } }],
  ])(
    'shows a listener only its documented fields (key, tracker, endpoint, final): %s',
    async (_, options) => {
      const t = makeClient(options);
      const seen: { keys: string[]; json: Record<string, unknown> }[] = [];
      t.client.on('cancel', (e) =>
        seen.push({ keys: Object.keys(e), json: JSON.parse(JSON.stringify(e)) }),
      );
      const owner = t.client.get('/payload');
      const joiner = t.client.get('/payload');
      owner.cancel();
      joiner.cancel();
      await Promise.allSettled([owner, joiner]);
      expect(seen).toHaveLength(2);
      for (const { keys, json } of seen) {
        expect(keys.sort()).toEqual(['endpoint', 'final', 'key', 'tracker']);
        expect(Object.keys(json).sort()).toEqual(['endpoint', 'final', 'key', 'tracker']);
      }
      // The joiner's cancel ended the flight: the observer still found it (it follows none now).
      expect(debugOf(t.client)).toMatchObject({ flights: 0, adaptiveFlights: 0 });
    },
  );
});

describe('cancel() of a promise the cache answered', () => {
  // Documented (README, De-duplication and cancellation): settled when returned, like any
  // promise after its settle; a stale serve's background refresh is not the caller's.
  test('a fresh hit resolves with the entry; a stale serve too, its refresh going on', async () => {
    const t = makeClient({ cache: { ttl: 100, strategy: 'stale-while-revalidate' } });
    const first = t.client.get('/c');
    t.fake.last().json(1);
    await first;
    const hit = t.client.get('/c');
    hit.cancel();
    await expect(hit).resolves.toMatchObject({ data: 1 });
    await t.clock.advance(200);
    const stale = t.client.get('/c');
    stale.cancel();
    await expect(stale).resolves.toMatchObject({ data: 1 });
    expect(t.fake.calls).toHaveLength(2);
    expect(t.fake.last().signal?.aborted ?? false).toBe(false);
    t.fake.last().json(2);
    await flush();
    expect(t.client.getCached(t.client.resolve('GET', '/c').key)?.data).toBe(2);
    expect(t.of('cancel')).toHaveLength(0);
  });
});

describe('a stream body whose caller cancelled as the attempt handed it over', () => {
  // A cancel that landed after the attempt had resolved but before the flight resumed dropped
  // the response with its stream unread and uncancelled: nobody could read it, and its download
  // (a real fetch's connection) stayed open.
  // The test fetch reads the signal but does not tie the body to it (as an in-process handler
  // may not): keel cancels the stream itself. (A real fetch's body also ends with the signal.)
  test.each([false, true])(
    'is cancelled, whatever microtask the cancel lands in (fetch reads its signal: %s)',
    async (readsSignal) => {
      for (let delay = 0; delay < 25; delay++) {
        let state = 'never made';
        const { client } = makeClient(
          {},
          {
            handler: (call) => {
              if (readsSignal) void call.init.signal;
              state = 'open';
              // Answered at once (not a microtask later, when the fake would drop it if the
              // cancel came first: a real fetch then cancels the body itself).
              call.respond(
                new Response(
                  new ReadableStream({
                    start(c) {
                      c.enqueue(new TextEncoder().encode('{}'));
                    },
                    pull: () => new Promise(() => {}),
                    cancel() {
                      state = 'cancelled';
                    },
                  }),
                  { headers: { 'content-type': 'application/json' } },
                ),
              );
              return undefined;
            },
          },
        );
        const p = client.get<ReadableStream>('/s', { responseType: 'stream' });
        const outcome = p.then(
          (r) => ({ ok: true as const, stream: r.data }),
          () => ({ ok: false as const }),
        );
        let q: Promise<unknown> = Promise.resolve();
        for (let i = 0; i < delay; i++) q = q.then(() => {});
        void q.then(() => p.cancel());
        const result = await outcome;
        await flush();
        if (result.ok) {
          // Handed over: the caller's to read or cancel.
          expect(state, `delay ${delay}`).toBe('open');
          await result.stream.cancel();
        } else {
          // Cancelled before the fetch ran (nothing made), or its stream cancelled.
          expect(state, `delay ${delay}`).not.toBe('open');
        }
      }
    },
  );
});
