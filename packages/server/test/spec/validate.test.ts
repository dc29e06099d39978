// Spec 001 ctx.validate row and "Errors" table (BadRequestError, HTTP 400, structured): the rule
// keys the spec lists (`type` string / email, `required`, `min`), each on its own and at its
// boundary, the error as a handler catching it sees it, and the sources the spec names (body,
// query, path parameters, targetData). test/blackbox/validate-graphql.test.ts covers the rest.
import { describe, expect, it } from 'vitest';
import { BadRequestError, createApp, HttpException, isBadRequestError } from '../../src/index';
import { call, postJson, serve } from '../blackbox/helpers';

const signup = {
  name: { type: 'string', required: true, min: 3 },
  email: { type: 'email', required: true },
} as const;

describe('spec 001 ctx.validate: the error', () => {
  it('throws (synchronously) a BadRequestError with HTTP status 400 a handler can catch', async () => {
    const app = createApp();
    let caught: unknown;
    app.post('/signup', (ctx) => {
      try {
        ctx.validate(signup);
      } catch (e) {
        caught = e;
      }
      return ctx.status(422).json({ handled: true });
    });
    const port = await serve(app);
    const r = await postJson(port, '/signup', { name: 'Al', email: 'not-an-email' });
    expect(r.status).toBe(422);
    expect(caught).toBeInstanceOf(BadRequestError);
    expect(caught).toBeInstanceOf(HttpException);
    expect(caught).toBeInstanceOf(Error);
    expect(isBadRequestError(caught)).toBe(true);
    const err = caught as BadRequestError;
    expect(err.name).toBe('BadRequestError');
    expect(err.status).toBe(400);
    // The other common spelling (Node's res.statusCode, http-errors, Fastify): the same number.
    expect((err as unknown as { statusCode: number }).statusCode).toBe(400);
    expect(err.fields.map((f) => [f.field, f.rule])).toEqual([
      ['name', 'min'],
      ['email', 'type'],
    ]);
  });

  it('left uncaught (sync or async handler) it is a 400 with a structured JSON body', async () => {
    const app = createApp();
    app.post('/sync', (ctx) => ctx.json(ctx.validate(signup)));
    app.post('/async', async (ctx) => {
      await Promise.resolve();
      return ctx.json(ctx.validate(signup));
    });
    const port = await serve(app);
    for (const path of ['/sync', '/async']) {
      const r = await postJson(port, path, { email: 'a@b.co' });
      expect(r.status).toBe(400);
      expect(r.headers['content-type']).toMatch(/^application\/json/);
      const body = r.json() as Record<string, unknown>;
      expect(typeof body).toBe('object');
      expect(body.status).toBe(400);
      expect(body.fields).toEqual([{ field: 'name', rule: 'required', message: 'is required' }]);
    }
  });

  it('nothing after the failing validate runs', async () => {
    const app = createApp();
    let reached = false;
    app.post('/s', (ctx) => {
      ctx.validate(signup);
      reached = true;
      return ctx.json({});
    });
    const port = await serve(app);
    expect((await postJson(port, '/s', {})).status).toBe(400);
    expect(reached).toBe(false);
  });
});

describe('spec 001 ctx.validate: rule keys type, required, min', () => {
  it('returns the validated data (the declared fields, values unchanged)', async () => {
    const app = createApp();
    app.post('/signup', (ctx) => ctx.status(201).json(ctx.validate(signup)));
    const port = await serve(app);
    const r = await postJson(port, '/signup', { name: 'Alice', email: 'alice@example.com' });
    expect(r.status).toBe(201);
    expect(r.json()).toEqual({ name: 'Alice', email: 'alice@example.com' });
  });

  it('min on a string is its length, inclusive: min 3 takes "abc", refuses "ab"', async () => {
    const app = createApp();
    app.post('/m', (ctx) => ctx.json(ctx.validate({ name: { type: 'string', min: 3 } })));
    const port = await serve(app);
    expect((await postJson(port, '/m', { name: 'abc' })).json()).toEqual({ name: 'abc' });
    const short = await postJson(port, '/m', { name: 'ab' });
    expect(short.status).toBe(400);
    expect((short.json() as { fields: unknown }).fields).toEqual([
      { field: 'name', rule: 'min', message: 'must be at least 3 characters' },
    ]);
  });

  it('min applies to an email too (its length)', async () => {
    const app = createApp();
    app.post('/m', (ctx) => ctx.json(ctx.validate({ email: { type: 'email', min: 8 } })));
    const port = await serve(app);
    expect((await postJson(port, '/m', { email: 'ab@cd.ef' })).status).toBe(200);
    expect((await postJson(port, '/m', { email: 'a@cd.ef' })).status).toBe(400);
  });

  it('type email: common valid addresses pass, common invalid ones fail', async () => {
    const app = createApp();
    app.post('/e', (ctx) => ctx.json(ctx.validate({ email: { type: 'email', required: true } })));
    const port = await serve(app);
    for (const ok of ['user@example.com', 'first.last+tag@sub.example.co.uk', 'x_y-z@a-b.io']) {
      expect((await postJson(port, '/e', { email: ok })).status, ok).toBe(200);
    }
    for (const bad of ['plain', '@example.com', 'user@', 'user@example', 'a b@example.com', 5]) {
      expect((await postJson(port, '/e', { email: bad })).status, String(bad)).toBe(400);
    }
  });

  it('required: true fails on missing, null and empty string; required false / absent lets a missing field through', async () => {
    const app = createApp();
    app.post('/r', (ctx) =>
      ctx.json(
        ctx.validate({
          must: { type: 'string', required: true },
          may: { type: 'string', required: false },
          also: { type: 'string' },
        }),
      ),
    );
    const port = await serve(app);
    expect((await postJson(port, '/r', { must: 'x' })).json()).toEqual({ must: 'x' });
    for (const must of [undefined, null, '']) {
      const r = await postJson(port, '/r', { must });
      expect(r.status).toBe(400);
      expect((r.json() as { fields: { rule: string }[] }).fields[0]?.rule).toBe('required');
    }
  });

  it('type string: a number or a boolean is not a string', async () => {
    const app = createApp();
    app.post('/t', (ctx) => ctx.json(ctx.validate({ name: { type: 'string' } })));
    const port = await serve(app);
    for (const name of [42, true, { a: 1 }, ['a']]) {
      expect((await postJson(port, '/t', { name })).status).toBe(400);
    }
  });
});

describe('spec 001 ctx.validate: what it validates', () => {
  it('a form (urlencoded) request body', async () => {
    const app = createApp();
    app.post('/f', (ctx) => ctx.json(ctx.validate(signup)));
    const port = await serve(app);
    const form = (body: string) =>
      call(port, {
        method: 'POST',
        path: '/f',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
    const ok = await form('name=Alice&email=alice%40example.com');
    expect(ok.json()).toEqual({ name: 'Alice', email: 'alice@example.com' });
    expect((await form('name=Al&email=alice%40example.com')).status).toBe(400);
  });

  it('query parameters of a GET (min on a query string)', async () => {
    const app = createApp();
    app.get('/search', (ctx) =>
      ctx.json(ctx.validate({ q: { type: 'string', required: true, min: 2 } })),
    );
    const port = await serve(app);
    expect((await call(port, { path: '/search?q=ab' })).json()).toEqual({ q: 'ab' });
    expect((await call(port, { path: '/search?q=a' })).status).toBe(400);
    expect((await call(port, { path: '/search' })).status).toBe(400);
  });

  it('path parameters', async () => {
    const app = createApp();
    app.get('/users/:handle', (ctx) =>
      ctx.json(ctx.validate({ handle: { type: 'string', required: true, min: 3 } })),
    );
    const port = await serve(app);
    expect((await call(port, { path: '/users/bob' })).json()).toEqual({ handle: 'bob' });
    expect((await call(port, { path: '/users/bo' })).status).toBe(400);
  });

  it('targetData when given, even on a request with a body', async () => {
    const app = createApp();
    app.post('/t', (ctx) =>
      ctx.json(ctx.validate({ email: { type: 'email', required: true } }, { email: 'a@b.co' })),
    );
    app.post('/bad', (ctx) =>
      ctx.json(ctx.validate({ email: { type: 'email', required: true } }, { email: 'nope' })),
    );
    const port = await serve(app);
    // The body is invalid for the rules; targetData is what is validated.
    expect((await postJson(port, '/t', { email: 'nope' })).json()).toEqual({ email: 'a@b.co' });
    expect((await postJson(port, '/bad', { email: 'a@b.co' })).status).toBe(400);
  });
});
