import { describe, expect, it } from 'vitest';
import { createApp } from '../src/index';

// What a new user gets wrong first, and the message that must tell them what and how to fix it.

describe('a route path the router cannot take is a keel: error naming the route', () => {
  const bad: [path: string, shows: RegExp][] = [
    ['users/:id', /"\/" first/],
    ['', /"\/" first/],
    ['/a/*/b', /"\*" only last/i],
    ['/users/:id(', /regexp/i],
  ];
  for (const [path, shows] of bad) {
    it(`${JSON.stringify(path)}: RangeError with the path shown and the rule`, () => {
      const app = createApp();
      let error: unknown;
      try {
        app.get(path, (ctx) => ctx.json(1));
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(RangeError);
      const message = (error as Error).message;
      expect(message).toMatch(/^keel: `path of GET .*` must be a route pattern/);
      expect(message).toContain(`got ${JSON.stringify(path)}`);
      expect(message).toMatch(shows);
      // The router's own words are kept as the cause.
      expect((error as Error).cause).toBeInstanceOf(Error);
    });
  }

  it('a path that is not a string is a TypeError', () => {
    const app = createApp();
    expect(() => app.get(42 as never, (ctx) => ctx.json(1))).toThrow(
      /^keel: `path of GET 42` must be a route pattern.*got 42$/,
    );
    expect(() => app.get(42 as never, (ctx) => ctx.json(1))).toThrow(TypeError);
  });

  it('a parameter without a name, or a name used twice, is refused (one value would be lost)', () => {
    const app = createApp();
    expect(() => app.get('/users/:', (ctx) => ctx.json(1))).toThrow(
      /^keel: `path of GET \/users\/:` must be a route pattern.*a name for every parameter/,
    );
    expect(() => app.get('/x/:id/y/:id', (ctx) => ctx.json(1))).toThrow(
      /^keel: `path of GET \/x\/:id\/y\/:id` must be a route pattern.*":id" twice/,
    );
    // Escaped colons and multi-parameter segments stay fine.
    app.get('/a::b', (ctx) => ctx.json(1));
    app.get('/range/:from-:to', (ctx) => ctx.json(ctx.params));
    app.get('/at/:time(^\\d{2}:\\d{2}$)', (ctx) => ctx.json(ctx.params));
  });

  it('the same method and path twice says so, not "Method already declared" from the router', () => {
    const app = createApp();
    app.get('/users', (ctx) => ctx.json(1));
    let error: unknown;
    try {
      app.get('/users', (ctx) => ctx.json(2));
    } catch (e) {
      error = e;
    }
    expect((error as Error).message).toBe(
      'keel: GET /users has a handler already: register each method and path once',
    );
    // all() over a path one method already has names that method.
    expect(() => app.all('/users', (ctx) => ctx.json(3))).toThrow(
      'keel: GET /users has a handler already',
    );
  });
});

describe('ctx.json / ctx.send of a value JSON cannot hold', () => {
  it('a BigInt or a cycle: 500, and onError gets a keel: TypeError saying what to do', async () => {
    const app = createApp();
    const errors: Error[] = [];
    app.onError((err) => {
      errors.push(err as Error);
    });
    app.get('/big', (ctx) => ctx.json({ n: 1n }));
    app.get('/cycle', (ctx) => {
      const o: Record<string, unknown> = {};
      o.self = o;
      return ctx.json(o);
    });
    app.get('/send', (ctx) => ctx.send({ n: 2n }));
    for (const url of ['/big', '/cycle', '/send']) {
      const res = await app.inject({ url });
      expect(res.status).toBe(500);
    }
    expect(errors).toHaveLength(3);
    for (const e of errors) expect(e).toBeInstanceOf(TypeError);
    expect(errors[0]!.message).toBe(
      'keel: ctx.json() needs a JSON-serializable value, got an object (Do not know how to ' +
        'serialize a BigInt): turn BigInts into strings or numbers and drop cycles (or give the ' +
        'object a toJSON())',
    );
    expect(errors[1]!.message).toMatch(
      /^keel: ctx\.json\(\) needs .*\(Converting circular structure/,
    );
    expect(errors[2]!.message).toMatch(/^keel: ctx\.send\(\) needs a JSON-serializable value/);
    expect(errors[0]!.cause).toBeInstanceOf(TypeError);
  });

  // JSON.stringify gives no text for these (undefined), which went out as `null` with a 200: a
  // handler that passed a function or a Symbol by mistake looked like it worked.
  it('a function or a Symbol: 500, and onError gets a keel: TypeError naming it', async () => {
    const app = createApp();
    const errors: Error[] = [];
    app.onError((err) => {
      errors.push(err as Error);
    });
    app.get('/fn', (ctx) => ctx.json(() => 1));
    app.get('/sym', (ctx) => ctx.json(Symbol('s')));
    app.get('/send-fn', (ctx) => ctx.send(() => 1));
    for (const url of ['/fn', '/sym', '/send-fn']) {
      expect((await app.inject({ url })).status).toBe(500);
    }
    expect(errors).toHaveLength(3);
    for (const e of errors) expect(e).toBeInstanceOf(TypeError);
    expect(errors[0]!.message).toMatch(
      /^keel: ctx\.json\(\) needs a JSON-serializable value, got a function .*JSON has no text for a function/,
    );
    expect(errors[1]!.message).toMatch(/got a symbol|got Symbol/);
    expect(errors[2]!.message).toMatch(/^keel: ctx\.send\(\) needs a JSON-serializable value/);
  });

  it('a value that serializes still goes out as before', async () => {
    const app = createApp();
    app.get('/ok', (ctx) => ctx.json({ n: 1, s: 'x' }));
    app.get('/undef', (ctx) => ctx.json(undefined));
    expect((await app.inject({ url: '/ok' })).json()).toEqual({ n: 1, s: 'x' });
    expect((await app.inject({ url: '/undef' })).body).toBe('null');
  });
});

describe('a handler that returns its data instead of sending it (as in Fastify)', () => {
  it('gets a 500, and onError is told that a returned value is not sent and what to call', async () => {
    const app = createApp();
    const errors: Error[] = [];
    app.onError((err) => {
      errors.push(err as Error);
    });
    app.get('/users', () => ({ users: [] }) as never);
    expect((await app.inject({ url: '/users' })).status).toBe(500);
    expect(errors.map((e) => e.message)).toEqual([
      'keel: the handler for GET /users sent no response (a returned value is not sent: ' +
        'return ctx.json(value), ctx.send(...) or another ctx response)',
    ]);
  });
});
