import { describe, expect, test } from 'vitest';
import { CancelledError } from '../src/index';
import { checkInvalidateTarget } from '../src/internals';
import { debugOf, flush, makeClient, settle } from './helpers';

const keyOf = (t: ReturnType<typeof makeClient>, url: string) => t.client.resolve('GET', url).key;

describe('cancelReads', () => {
  test('a read in flight cannot overwrite an optimistic write once cancelled', async () => {
    const t = makeClient();
    const key = keyOf(t, '/todos');
    const updates: unknown[] = [];
    t.client.subscribe(key, (u) => updates.push(u.response?.data));
    // A refetch of the list is in flight (started before the mutation).
    const read = settle(t.client.get('/todos'));
    expect(t.client.fetchingKeys()).toEqual([key]);

    expect(t.client.cancelReads('/todos')).toEqual([key]);
    t.client.setCached(t.client.resolve('GET', '/todos'), {
      data: ['a', 'optimistic'],
      status: 200,
      statusText: 'OK',
      headers: new Headers(),
    });
    // The server answers the old list anyway (the abort raced it): it is not cached.
    t.fake.calls[0]!.json(['a']);
    const outcome = await read;
    expect(outcome.state).toBe('rejected');
    expect((outcome as { reason: unknown }).reason).toBeInstanceOf(CancelledError);
    await flush();
    expect(t.client.getCached(key)?.data).toEqual(['a', 'optimistic']);
    expect(updates).toEqual([['a', 'optimistic']]);
    expect(t.fake.calls[0]!.signal?.aborted).toBe(true);
    expect(t.client.fetchingKeys()).toEqual([]);
    expect(t.of('cancel')).toMatchObject([{ key, final: true }]);
    expect(debugOf(t.client)).toMatchObject({ flights: 0, inflight: 0 });
  });

  test('the target means what it means for invalidate: path, tags, predicate', async () => {
    const t = makeClient();
    const reads = [
      t.client.get('/todos', { tags: ['list'] }),
      t.client.get('/todos/7'),
      t.client.get('/todos-archive'),
      t.client.get('/users', { tags: ['people'] }),
    ].map((p) => settle(p));
    expect(t.client.cancelReads('/todos').sort()).toEqual(
      [keyOf(t, '/todos'), keyOf(t, '/todos/7')].sort(),
    );
    expect(t.client.cancelReads(['people'])).toEqual([
      t.client.resolve('GET', '/users', { tags: ['people'] }).key,
    ]);
    expect(t.client.cancelReads((meta) => meta.key.includes('archive'))).toEqual([
      keyOf(t, '/todos-archive'),
    ]);
    const outcomes = await Promise.all(reads);
    expect(outcomes.map((o) => o.state)).toEqual(['rejected', 'rejected', 'rejected', 'rejected']);
    expect(t.client.cancelReads('/todos')).toEqual([]);
  });

  test('mutations in flight are not reads: left alone', async () => {
    const t = makeClient();
    const write = settle(t.client.post('/todos', { title: 'x' }));
    expect(t.client.cancelReads('/todos')).toEqual([]);
    t.fake.calls[0]!.json({ id: 1 }, { status: 201 });
    expect((await write).state).toBe('fulfilled');
  });

  test('fetchingKeys filters by target', () => {
    const t = makeClient();
    void settle(t.client.get('/a', { tags: ['x'] }));
    void settle(t.client.get('/b'));
    expect(t.client.fetchingKeys(['x'])).toEqual([
      t.client.resolve('GET', '/a', { tags: ['x'] }).key,
    ]);
    expect(t.client.fetchingKeys('/b')).toEqual([keyOf(t, '/b')]);
    expect(t.client.fetchingKeys('/c')).toEqual([]);
    t.client.cancelAll();
  });

  test('any other shape is a TypeError naming the argument', () => {
    const t = makeClient();
    expect(() => t.client.cancelReads(5 as never)).toThrow(
      'keel: `target` must be a path string, an array of tag strings or a predicate function, got 5',
    );
    expect(() => t.client.invalidate(['a', 1] as never)).toThrow(
      'keel: `target[1]` must be a tag string (an array target lists tags), got 1',
    );
    expect(() => t.client.fetchingKeys({ path: '/x' } as never)).toThrow(TypeError);
  });
});

describe('checkInvalidateTarget', () => {
  test.each([
    ['/todos', true],
    [['a', 'b'], true],
    [[], true],
    [() => true, true],
    [5, false],
    [null, false],
    [{ path: '/x' }, false],
    [['a', 2], false],
    [undefined, false],
  ])('%o valid: %s', (value, valid) => {
    const check = () => checkInvalidateTarget(value, 'invalidate');
    if (valid) expect(check).not.toThrow();
    else expect(check).toThrow(TypeError);
    if (!valid) expect(check).toThrow(/^keel: `invalidate(\[1\])?` must be /);
  });
});

describe('matches', () => {
  test('applies a target to a request as invalidate would', () => {
    const t = makeClient({ baseURL: 'https://api.test/v1' });
    const post = t.client.resolve('POST', '/todos/7', { tags: ['todos'] });
    expect(t.client.matches('/todos', post)).toBe(true);
    expect(t.client.matches('/todos-x', post)).toBe(false);
    expect(t.client.matches(['todos'], post)).toBe(true);
    expect(t.client.matches(['users'], post)).toBe(false);
    expect(t.client.matches((meta) => meta.key.startsWith('POST'), post)).toBe(true);
    expect(() => t.client.matches({} as never, post)).toThrow(TypeError);
  });
});
