import { runInNewContext } from 'node:vm';
import { describe, expect, test } from 'vitest';
import { createFakeFetch, FakeAbortSource, FakeClock, flush, track } from '../../test/helpers';
import { resolveClientOptions } from '../config';
import { CancelledError } from '../errors/cancelled-error';
import { errorOf } from '../errors/errors.fixture';
import { HttpError } from '../errors/http-error';
import { TimeoutError } from '../errors/timeout-error';
import { resolveRequest } from '../request/resolve';
import type { FetchLike, RequestOptions } from '../types/options';
import { attemptOnce } from './attempt';

const spec = (method: 'GET' | 'POST' = 'GET', body?: unknown, options?: RequestOptions) =>
  resolveRequest(
    resolveClientOptions({ fetch: async () => new Response('') }),
    method,
    'https://a.test/x',
    body === undefined ? options : { ...options, body },
  );

/** A body stream of exactly these chunks, bytes or not. */
const streamOf = (chunks: readonly unknown[]) =>
  new ReadableStream({
    start(c) {
      for (const chunk of chunks) c.enqueue(chunk);
      c.close();
    },
  });

/** One attempt of a GET with `options` by `f`, on a fresh source and clock. */
const attemptWith = (f: FetchLike, options?: RequestOptions) =>
  attemptOnce(f, spec('GET', undefined, options), new FakeAbortSource(), new FakeClock(), 0);

/** The error `attempt` fails with, or undefined when it succeeds. */
const failure = (attempt: Promise<unknown>) =>
  attempt.then(
    () => undefined,
    (e: Error) => e,
  );

describe('attemptOnce', () => {
  test('calls fetch with method, headers, body and a signal', async () => {
    const f = createFakeFetch({ handler: (c) => Response.json({ ok: c.method }) });
    const clock = new FakeClock();
    const r = await attemptOnce(f.fetch, spec('POST', { a: 1 }), new FakeAbortSource(), clock, 0);
    expect(r.data).toEqual({ ok: 'POST' });
    expect(f.last().body).toBe('{"a":1}');
    expect(f.last().headers['content-type']).toBe('application/json');
    expect(f.last().signal).toBeInstanceOf(AbortSignal);
    expect(clock.created).toBe(0);
  });

  test('a timeout rejects with TimeoutError and aborts the fetch signal', async () => {
    const f = createFakeFetch();
    const clock = new FakeClock();
    const p = track(attemptOnce(f.fetch, spec(), new FakeAbortSource(), clock, 50));
    await clock.advance(49);
    expect(p.current.state).toBe('pending');
    await clock.advance(1);
    expect(p.current).toMatchObject({ state: 'rejected' });
    expect((p.current as { reason: unknown }).reason).toBeInstanceOf(TimeoutError);
    expect(f.last().signal?.aborted).toBe(true);
    expect(clock.live).toBe(0);
  });

  test('a response before the timeout clears the timer', async () => {
    const f = createFakeFetch();
    const clock = new FakeClock();
    const p = attemptOnce(f.fetch, spec(), new FakeAbortSource(), clock, 50);
    f.last().text('ok');
    await expect(p).resolves.toMatchObject({ data: 'ok' });
    expect(clock.live).toBe(0);
  });

  test.each([0, 1000])(
    'the source aborting (timeout %i) rejects with its reason and aborts the fetch signal',
    async (timeout) => {
      const f = createFakeFetch({ ignoreAbort: true });
      const clock = new FakeClock();
      const source = new FakeAbortSource();
      const p = track(attemptOnce(f.fetch, spec(), source, clock, timeout));
      await flush();
      expect(source.onAbort).toBeTypeOf('function');
      const reason = errorOf.cancelled();
      source.abort(reason);
      await flush();
      expect((p.current as { reason: unknown }).reason).toBe(reason);
      expect(f.last().signal?.aborted).toBe(true);
      expect(f.last().signal?.reason).toBe(reason);
      expect(source.onAbort).toBeUndefined();
      expect(clock.live).toBe(0);
    },
  );

  test('a reason that is not a CancelledError is wrapped in one, with the reason as cause', async () => {
    const f = createFakeFetch();
    const source = new FakeAbortSource();
    const p = track(attemptOnce(f.fetch, spec(), source, new FakeClock(), 0));
    await flush();
    const reason = new Error('group cancelled');
    source.abort(reason);
    await flush();
    const error = (p.current as { reason: unknown }).reason as CancelledError;
    expect(error).toBeInstanceOf(CancelledError);
    expect(error.cause).toBe(reason);
  });

  test('aborting the flight rejects with CancelledError even if fetch ignores its signal', async () => {
    const f = createFakeFetch({ ignoreAbort: true });
    const clock = new FakeClock();
    const source = new FakeAbortSource();
    const p = track(attemptOnce(f.fetch, spec(), source, clock, 1000));
    await flush();
    source.abort(errorOf.cancelled());
    await flush();
    expect((p.current as { reason: unknown }).reason).toBeInstanceOf(CancelledError);
    expect(f.last().signal?.aborted).toBe(true);
    expect(clock.live).toBe(0);
  });

  test('an abort during body parsing rejects promptly', async () => {
    const clock = new FakeClock();
    const source = new FakeAbortSource();
    const body = new ReadableStream({ start() {} }); // never ends
    const f = createFakeFetch({
      handler: () => new Response(body, { headers: { 'content-type': 'application/json' } }),
    });
    const p = track(attemptOnce(f.fetch, spec(), source, clock, 0));
    await flush();
    expect(p.current.state).toBe('pending');
    source.abort(errorOf.cancelled());
    await flush();
    expect((p.current as { reason: unknown }).reason).toBeInstanceOf(CancelledError);
  });

  // A fetch that ignores its signal and answers after the attempt ended (cancelled, timed out):
  // its body was read anyway, a never-ending one for ever (its connection with it).
  test.each([
    ['cancelled', CancelledError, 0],
    ['timed out', TimeoutError, 50],
  ] as const)(
    'a response that arrives once the attempt %s has its body cancelled, not read',
    async (_, type, timeout) => {
      const clock = new FakeClock();
      const source = new FakeAbortSource();
      let cancelled: unknown = 'not cancelled';
      let pulls = 0;
      const body = new ReadableStream({
        // One chunk, then a wait for ever: a download that never ends.
        pull: (c) => {
          if (pulls++ > 0) return new Promise<void>(() => {});
          c.enqueue(new Uint8Array(8));
        },
        cancel: (reason) => {
          cancelled = reason;
        },
      });
      let answer!: (res: Response) => void;
      const deaf = () => new Promise<Response>((resolve) => (answer = resolve));
      const p = track(attemptOnce(deaf, spec(), source, clock, timeout));
      if (timeout > 0) await clock.advance(timeout);
      else source.abort(errorOf.cancelled());
      await flush();
      expect((p.current as { reason: unknown }).reason).toBeInstanceOf(type);
      answer(new Response(body, { headers: { 'content-type': 'application/json' } }));
      await flush();
      await flush();
      expect(cancelled).toBeInstanceOf(type);
      expect(pulls).toBeLessThanOrEqual(1);
      expect(body.locked).toBe(false);
      expect(clock.live).toBe(0);
      expect(source.onAbort).toBeUndefined();
    },
  );

  test.each([
    ['text/plain', '\ufeffprix: 12 €, 𝄞', 'prix: 12 €, 𝄞'],
    ['application/json', '\ufeff{"prix":"12 €","clé":"𝄞"}', { prix: '12 €', clé: '𝄞' }],
  ])(
    'a %s body from a fetch that never reads its signal decodes as fetch does (BOM dropped, characters split across chunks)',
    async (type, text, data) => {
      const bytes = new TextEncoder().encode(text);
      // One byte per chunk: every multi-byte character (and the BOM) arrives split.
      const body = streamOf([...bytes].map((byte) => Uint8Array.of(byte)));
      const deaf = async () => new Response(body, { headers: { 'content-type': type } });
      const r = await attemptOnce(deaf, spec(), new FakeAbortSource(), new FakeClock(), 0);
      expect(r.data).toEqual(data);
      const whole = await attemptOnce(
        async () => new Response(bytes, { headers: { 'content-type': type } }),
        spec(),
        new FakeAbortSource(),
        new FakeClock(),
        0,
      );
      expect(whole.data).toEqual(data);
    },
  );

  test.each([[['abc']], [['ab', 'c']], [[Uint8Array.of(123), 'x']], [[{}]]])(
    'a body chunk that is no bytes (%j) is a NetworkError saying so, whether or not the fetch reads its signal',
    async (chunks) => {
      const messages: string[] = [];
      for (const hears of [false, true]) {
        const body = streamOf(chunks);
        const f = async (_url: string, init?: RequestInit) => {
          if (hears) void init?.signal;
          return new Response(body, { headers: { 'content-type': 'text/plain' } });
        };
        const error = await attemptOnce(f, spec(), new FakeAbortSource(), new FakeClock(), 0).then(
          () => undefined,
          (e: Error) => e,
        );
        expect(error?.name).toBe('NetworkError');
        messages.push(String((error?.cause as Error | undefined)?.message));
      }
      // keel's reader reads both (and says what the chunk was).
      for (const message of messages) {
        expect(message).toMatch(/^keel: `a response body chunk` must be a Uint8Array, got /);
      }
    },
  );

  test.each([
    ['maxResponseBytes', { maxResponseBytes: 100 }, [false, true]],
    ['an arrayBuffer body', { responseType: 'arrayBuffer' }, [false]],
    ['a blob body', { responseType: 'blob' }, [false]],
  ] as const)(
    "with %s, a body chunk that is no bytes is keel's TypeError saying so, the rest not downloaded",
    async (_what, options, hearing) => {
      for (const hears of hearing) {
        let pulls = 0;
        const body = new ReadableStream({
          pull(c) {
            pulls++;
            c.enqueue(pulls === 1 ? Uint8Array.of(123) : 'x');
          },
        });
        const f = async (_url: string, init?: RequestInit) => {
          if (hears) void init?.signal;
          return new Response(body, { headers: { 'content-type': 'text/plain' } });
        };
        const error = await failure(attemptWith(f, options));
        expect(error?.name).toBe('NetworkError');
        expect(String((error?.cause as Error | undefined)?.message)).toMatch(
          /^keel: `a response body chunk` must be a Uint8Array, got /,
        );
        await flush();
        expect(pulls).toBeLessThanOrEqual(3);
      }
    },
  );

  test("a counted stream body is read by the same reader: a chunk that is no bytes errors it with keel's TypeError, the rest not downloaded", async () => {
    for (const hears of [false, true]) {
      let pulls = 0;
      let cancelled: unknown;
      const body = new ReadableStream({
        pull(c) {
          pulls++;
          c.enqueue(pulls === 1 ? Uint8Array.of(123) : 'x');
        },
        cancel(reason) {
          cancelled = reason;
        },
      });
      const f = async (_url: string, init?: RequestInit) => {
        if (hears) void init?.signal;
        return new Response(body, { headers: { 'content-type': 'text/plain' } });
      };
      const r = await attemptWith(f, { responseType: 'stream', maxResponseBytes: 100 });
      const reader = (r.data as ReadableStream<Uint8Array>).getReader();
      expect(await reader.read()).toEqual({ done: false, value: Uint8Array.of(123) });
      const error = await reader.read().then(
        () => undefined,
        (e: Error) => e,
      );
      expect(error).toBeInstanceOf(TypeError);
      expect(error?.message).toMatch(/^keel: `a response body chunk` must be a Uint8Array, got /);
      await flush();
      expect(cancelled).toBe(error);
      expect(pulls).toBeLessThanOrEqual(3);
    }
  });

  test('a stream body from a fetch deaf to its signal is cancelled when the attempt ends before handing it over', async () => {
    for (const maxResponseBytes of [undefined, 100]) {
      for (let depth = 0; depth < 8; depth++) {
        let cancelled = false;
        const body = new ReadableStream({
          cancel() {
            cancelled = true;
          },
        });
        const source = new FakeAbortSource();
        const deaf = async () => {
          // The abort lands `depth` microtasks after the Response does.
          let step = Promise.resolve();
          for (let i = 0; i < depth; i++) step = step.then();
          void step.then(() => source.abort('gone'));
          return new Response(body);
        };
        const s = spec('GET', undefined, { responseType: 'stream', maxResponseBytes });
        const outcome = await attemptOnce(deaf, s, source, new FakeClock(), 0).then(
          (r) => ({ ok: true, data: r.data }),
          () => ({ ok: false, data: undefined }),
        );
        await flush();
        // Handed over (the caller's to read or cancel), or not, and then cancelled: never both,
        // never neither.
        if (outcome.ok) expect(cancelled).toBe(false);
        else expect(cancelled).toBe(true);
      }
    }
  });

  test('a counted stream body is pulled as its reader reads (backpressure), and cancelling it cancels the download', async () => {
    let pulls = 0;
    let cancelled: unknown;
    const body = new ReadableStream({
      pull(c) {
        pulls++;
        c.enqueue(Uint8Array.of(pulls));
      },
      cancel(reason) {
        cancelled = reason;
      },
    });
    const r = await attemptWith(async () => new Response(body), {
      responseType: 'stream',
      maxResponseBytes: 1000,
    });
    await flush();
    const before = pulls;
    const reader = (r.data as ReadableStream<Uint8Array>).getReader();
    for (let i = 0; i < 5; i++) await reader.read();
    await flush();
    // Nothing read ahead beyond the source's own queue: five reads, about five pulls.
    expect(pulls - before).toBeLessThanOrEqual(6);
    await reader.cancel('enough');
    expect(cancelled).toBe('enough');
  });

  test('an arrayBuffer body holds exactly its bytes, not the buffer its chunks are views of', async () => {
    const pool = new Uint8Array([9, 9, 1, 2, 3, 9, 4, 5, 9]);
    for (const [chunks, hears] of [
      [[pool.subarray(2, 5), pool.subarray(6, 8)], false],
      [[pool.subarray(2, 5)], false],
      [[pool.subarray(2, 5)], true],
      [[], false],
    ] as const) {
      const f = async (_url: string, init?: RequestInit) => {
        if (hears) void init?.signal;
        return new Response(streamOf(chunks), { headers: { 'content-type': 'image/png' } });
      };
      for (const options of [{}, { maxResponseBytes: 5 }]) {
        const r = await attemptWith(f, options);
        const expected = chunks.flatMap((c) => [...c]);
        expect(r.data).toBeInstanceOf(ArrayBuffer);
        expect([...new Uint8Array(r.data as ArrayBuffer)]).toEqual(expected);
      }
    }
    // Left as it was: nobody wrote into the pool.
    expect([...pool]).toEqual([9, 9, 1, 2, 3, 9, 4, 5, 9]);
  });

  test('a blob body has its bytes and the MIME type fetch gives it, however it is read', async () => {
    for (const hears of [false, true]) {
      for (const options of [
        { responseType: 'blob' },
        { responseType: 'blob', maxResponseBytes: 9 },
      ] as const) {
        const f = async (_url: string, init?: RequestInit) => {
          if (hears) void init?.signal;
          return new Response(streamOf([Uint8Array.of(104, 105), Uint8Array.of(33)]), {
            headers: { 'content-type': 'Text/Plain;Charset=UTF-8' },
          });
        };
        const r = await attemptWith(f, options);
        const blob = r.data as Blob;
        expect(await blob.text()).toBe('hi!');
        expect(blob.type).toBe(
          (
            await new Response('', {
              headers: { 'content-type': 'Text/Plain;Charset=UTF-8' },
            }).blob()
          ).type,
        );
      }
    }
  });

  test.each(['application/json', 'text/plain', 'image/png'])(
    'a %s body a fetch wrapper read already is a NetworkError, not empty data',
    async (type) => {
      for (const hears of [false, true]) {
        for (const options of [{}, { maxResponseBytes: 100 }]) {
          const f = async (_url: string, init?: RequestInit) => {
            if (hears) void init?.signal;
            const res = new Response('{"a":1}', { headers: { 'content-type': type } });
            await res.text();
            return res;
          };
          const error = await failure(attemptWith(f, options));
          expect(error?.name).toBe('NetworkError');
          expect(error?.cause).toBeInstanceOf(TypeError);
        }
      }
    },
  );

  test('a Response-like answer with no body stream (a test double with text()) is read by its text()', async () => {
    for (const hears of [false, true]) {
      for (const options of [{}, { maxResponseBytes: 100 }]) {
        const f = async (_url: string, init?: RequestInit) => {
          if (hears) void init?.signal;
          return {
            status: 200,
            statusText: 'OK',
            ok: true,
            headers: new Headers({ 'content-type': 'application/json' }),
            text: async () => '{"a":1}',
          } as unknown as Response;
        };
        const r = await attemptWith(f, options);
        expect(r.data).toEqual({ a: 1 });
      }
    }
  });

  test("a body chunk from another realm's Uint8Array is read (a jsdom page's fetch, a vm context)", async () => {
    const chunk = runInNewContext('new Uint8Array([123, 34, 111, 107, 34, 58, 49, 125])');
    expect(chunk instanceof Uint8Array).toBe(false);
    for (const chunks of [[chunk], [chunk.subarray(0, 3), chunk.subarray(3)]]) {
      const body = streamOf(chunks);
      const deaf = async () =>
        new Response(body, { headers: { 'content-type': 'application/json' } });
      const r = await attemptOnce(deaf, spec(), new FakeAbortSource(), new FakeClock(), 0);
      expect(r.data).toEqual({ ok: 1 });
    }
  });

  test("a late response's body whose cancel rejects leaves no unhandled rejection", async () => {
    const source = new FakeAbortSource();
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      const body = new ReadableStream({
        cancel: () => {
          throw new Error('cancel failed');
        },
      });
      let answer!: (res: Response) => void;
      const deaf = () => new Promise<Response>((resolve) => (answer = resolve));
      const p = track(attemptOnce(deaf, spec(), source, new FakeClock(), 0));
      source.abort(errorOf.cancelled());
      await flush();
      expect((p.current as { reason: unknown }).reason).toBeInstanceOf(CancelledError);
      answer(new Response(body));
      await flush();
      await new Promise((resolve) => setImmediate(resolve));
      expect(body.locked).toBe(false);
      expect(rejections).toEqual([]);
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  });

  test('an already-aborted source does not call fetch', async () => {
    const f = createFakeFetch();
    const source = new FakeAbortSource();
    source.abort(errorOf.cancelled());
    await expect(attemptOnce(f.fetch, spec(), source, new FakeClock(), 0)).rejects.toBeInstanceOf(
      CancelledError,
    );
    expect(f.calls).toHaveLength(0);
  });

  test('a fetch that throws synchronously rejects (and clears its timer)', async () => {
    const clock = new FakeClock();
    const boom = () => {
      throw new TypeError('sync');
    };
    await expect(attemptOnce(boom, spec(), new FakeAbortSource(), clock, 100)).rejects.toThrow(
      'sync',
    );
    expect(clock.live).toBe(0);
  });

  test('a network error passes through; an error status is an HttpError', async () => {
    const clock = new FakeClock();
    const net = createFakeFetch({ handler: () => Promise.reject(new TypeError('fetch failed')) });
    await expect(attemptOnce(net.fetch, spec(), new FakeAbortSource(), clock, 0)).rejects.toThrow(
      'fetch failed',
    );
    const bad = createFakeFetch({ handler: () => new Response('x', { status: 503 }) });
    await expect(
      attemptOnce(bad.fetch, spec(), new FakeAbortSource(), clock, 0),
    ).rejects.toBeInstanceOf(HttpError);
  });

  test('clears its callback on the source and its timer however it ends', async () => {
    const clock = new FakeClock();
    const source = new FakeAbortSource();
    const ok = createFakeFetch({ handler: () => new Response('ok') });
    await attemptOnce(ok.fetch, spec(), source, clock, 100);
    expect(source.onAbort).toBeUndefined();
    const bad = createFakeFetch({ handler: () => new Response('x', { status: 500 }) });
    await expect(attemptOnce(bad.fetch, spec(), source, clock, 100)).rejects.toBeInstanceOf(
      HttpError,
    );
    expect(source.onAbort).toBeUndefined();
    expect(clock.live).toBe(0);
  });

  test('the signal is made when the fetch reads it: a fetch that never does still ends on abort', async () => {
    const clock = new FakeClock();
    const source = new FakeAbortSource();
    let init: RequestInit | undefined;
    // Reads nothing of init at call time and never answers.
    const lazy = (_url: string, i?: RequestInit) => {
      init = i;
      return new Promise<Response>(() => {});
    };
    const p = track(attemptOnce(lazy, spec(), source, clock, 0));
    const reason = new Error('left');
    source.abort(reason);
    await flush();
    expect(p.current.state).toBe('rejected');
    expect((p.current as { reason: unknown }).reason).toBeInstanceOf(CancelledError);
    // Read after the abort, the signal is already aborted, with the same reason.
    expect(init!.signal!.aborted).toBe(true);
    expect(init!.signal!.reason).toBe(reason);
    expect(init!.signal).toBe(init!.signal);
  });

  test('a timeout that fires before the fetch reads its signal leaves it aborted by the TimeoutError', async () => {
    const clock = new FakeClock();
    let init: RequestInit | undefined;
    const lazy = (_url: string, i?: RequestInit) => {
      init = i;
      return new Promise<Response>(() => {});
    };
    const p = track(attemptOnce(lazy, spec(), new FakeAbortSource(), clock, 20));
    await clock.advance(20);
    expect((p.current as { reason: unknown }).reason).toBeInstanceOf(TimeoutError);
    expect(init!.signal!.reason).toBeInstanceOf(TimeoutError);
  });

  test('a fetch wrapper that spreads init passes the signal on (an own, enumerable property)', async () => {
    const f = createFakeFetch({ ignoreAbort: false });
    const clock = new FakeClock();
    const source = new FakeAbortSource();
    const wrapper = (url: string, init?: RequestInit) =>
      f.fetch(url, { ...init, headers: { ...(init?.headers as object), 'x-wrapped': '1' } });
    const p = track(attemptOnce(wrapper, spec(), source, clock, 0));
    expect(f.last().headers['x-wrapped']).toBe('1');
    const signal = f.last().signal!;
    expect(signal.aborted).toBe(false);
    source.abort(new Error('left'));
    expect(signal.aborted).toBe(true);
    await flush();
    expect(p.current.state).toBe('rejected');
  });
});
