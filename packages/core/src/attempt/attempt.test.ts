import { describe, expect, test } from 'vitest';
import { createFakeFetch, FakeClock, flush, track } from '../../test/helpers';
import { CancelledError } from '../errors/cancelled-error';
import { HttpError } from '../errors/http-error';
import { TimeoutError } from '../errors/timeout-error';
import { resolveClientOptions } from '../spec/options';
import { resolveSpec } from '../spec/resolve';
import { type AbortHook, attemptOnce } from './attempt';

const spec = (method: 'GET' | 'POST' = 'GET', body?: unknown) =>
  resolveSpec(
    resolveClientOptions({ fetch: async () => new Response('') }),
    method,
    'https://a.test/x',
    body === undefined ? undefined : { body },
    undefined,
  );

describe('attemptOnce', () => {
  test('calls fetch with method, headers, body and a signal', async () => {
    const f = createFakeFetch({ handler: (c) => Response.json({ ok: c.method }) });
    const clock = new FakeClock();
    const r = await attemptOnce(
      f.fetch,
      spec('POST', { a: 1 }),
      new AbortController().signal,
      clock,
      0,
    );
    expect(r.data).toEqual({ ok: 'POST' });
    expect(f.last().body).toBe('{"a":1}');
    expect(f.last().headers['content-type']).toBe('application/json');
    expect(f.last().signal).toBeInstanceOf(AbortSignal);
    expect(clock.created).toBe(0);
  });

  test('a timeout rejects with TimeoutError and aborts the fetch signal', async () => {
    const f = createFakeFetch();
    const clock = new FakeClock();
    const p = track(attemptOnce(f.fetch, spec(), new AbortController().signal, clock, 50));
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
    const p = attemptOnce(f.fetch, spec(), new AbortController().signal, clock, 50);
    f.last().text('ok');
    await expect(p).resolves.toMatchObject({ data: 'ok' });
    expect(clock.live).toBe(0);
  });

  test.each([0, 1000])(
    'an abort hook (timeout %i) races the abort instead of a listener, and is cleared after',
    async (timeout) => {
      const f = createFakeFetch({ ignoreAbort: true });
      const clock = new FakeClock();
      const controller = new AbortController();
      const hook: AbortHook = { onAbort: undefined };
      const p = track(attemptOnce(f.fetch, spec(), controller.signal, clock, timeout, hook));
      await flush();
      expect(hook.onAbort).toBeTypeOf('function');
      // The hook's owner aborts its signal and calls the hook, as Flight.abort does.
      const reason = new CancelledError();
      controller.abort(reason);
      hook.onAbort?.(reason);
      await flush();
      expect((p.current as { reason: unknown }).reason).toBe(reason);
      expect(f.last().signal?.aborted).toBe(true);
      expect(hook.onAbort).toBeUndefined();
      expect(clock.live).toBe(0);
    },
  );

  test('aborting the flight rejects with CancelledError even if fetch ignores its signal', async () => {
    const f = createFakeFetch({ ignoreAbort: true });
    const clock = new FakeClock();
    const controller = new AbortController();
    const p = track(attemptOnce(f.fetch, spec(), controller.signal, clock, 1000));
    await flush();
    controller.abort(new CancelledError());
    await flush();
    expect((p.current as { reason: unknown }).reason).toBeInstanceOf(CancelledError);
    expect(f.last().signal?.aborted).toBe(true);
    expect(clock.live).toBe(0);
  });

  test('an abort during body parsing rejects promptly', async () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    const body = new ReadableStream({ start() {} }); // never ends
    const f = createFakeFetch({
      handler: () => new Response(body, { headers: { 'content-type': 'application/json' } }),
    });
    const p = track(attemptOnce(f.fetch, spec(), controller.signal, clock, 0));
    await flush();
    expect(p.current.state).toBe('pending');
    controller.abort(new CancelledError());
    await flush();
    expect((p.current as { reason: unknown }).reason).toBeInstanceOf(CancelledError);
  });

  test('an already-aborted flight signal does not call fetch', async () => {
    const f = createFakeFetch();
    const controller = new AbortController();
    controller.abort(new CancelledError());
    await expect(
      attemptOnce(f.fetch, spec(), controller.signal, new FakeClock(), 0),
    ).rejects.toBeInstanceOf(CancelledError);
    expect(f.calls).toHaveLength(0);
  });

  test('a fetch that throws synchronously rejects (and clears its timer)', async () => {
    const clock = new FakeClock();
    const boom = () => {
      throw new TypeError('sync');
    };
    await expect(
      attemptOnce(boom, spec(), new AbortController().signal, clock, 100),
    ).rejects.toThrow('sync');
    expect(clock.live).toBe(0);
  });

  test('a network error passes through; an error status is an HttpError', async () => {
    const clock = new FakeClock();
    const net = createFakeFetch({ handler: () => Promise.reject(new TypeError('fetch failed')) });
    await expect(
      attemptOnce(net.fetch, spec(), new AbortController().signal, clock, 0),
    ).rejects.toThrow('fetch failed');
    const bad = createFakeFetch({ handler: () => new Response('x', { status: 503 }) });
    await expect(
      attemptOnce(bad.fetch, spec(), new AbortController().signal, clock, 0),
    ).rejects.toBeInstanceOf(HttpError);
  });

  test('removes every listener it adds to the flight signal', async () => {
    const controller = new AbortController();
    const added: unknown[] = [];
    const removed: unknown[] = [];
    const add = controller.signal.addEventListener.bind(controller.signal);
    const remove = controller.signal.removeEventListener.bind(controller.signal);
    controller.signal.addEventListener = ((
      t: string,
      fn: () => void,
      o?: AddEventListenerOptions,
    ) => {
      added.push(fn);
      add(t, fn, o);
    }) as never;
    controller.signal.removeEventListener = ((t: string, fn: () => void) => {
      removed.push(fn);
      remove(t, fn);
    }) as never;
    const f = createFakeFetch({ ignoreAbort: true, handler: () => new Response('ok') });
    await attemptOnce(f.fetch, spec(), controller.signal, new FakeClock(), 100);
    await attemptOnce(f.fetch, spec(), controller.signal, new FakeClock(), 0);
    expect(added.length).toBeGreaterThan(0);
    expect(added.every((fn) => removed.includes(fn))).toBe(true);
  });
});
