import { describe, expect, it } from 'vitest';
import { createApp } from '../src/index';

describe('ctx.validate', () => {
  const app = createApp();
  app.post('/users', (ctx) => {
    const data = ctx.validate({
      name: { type: 'string', required: true, min: 1 },
      email: { type: 'email', required: true },
    });
    return ctx.status(201).json(data);
  });
  app.get('/items/:id', (ctx) => {
    const data = ctx.validate({
      id: { type: 'integer', required: true },
      page: { type: 'integer', min: 1 },
    });
    return ctx.json(data);
  });
  app.get('/explicit', (ctx) => ctx.json(ctx.validate({ x: { type: 'string' } }, { x: 'given' })));

  it('validates the body and answers 400 with the documented body', async () => {
    const ok = await app.inject({
      method: 'POST',
      url: '/users',
      body: { name: 'A', email: 'a@b.io', x: 1 },
    });
    expect(ok.status).toBe(201);
    expect(ok.json()).toEqual({ name: 'A', email: 'a@b.io' });
    const bad = await app.inject({ method: 'POST', url: '/users', body: { email: 'nope' } });
    expect(bad.status).toBe(400);
    expect(bad.json()).toEqual({
      status: 400,
      error: 'Bad Request',
      message: 'Validation failed',
      fields: [
        { field: 'name', rule: 'required', message: 'is required' },
        { field: 'email', rule: 'type', message: 'must be a valid email address' },
      ],
    });
  });

  it('validates query plus params without a body, or the given data', async () => {
    expect((await app.inject({ url: '/items/3?page=2' })).json()).toEqual({ id: 3, page: 2 });
    const bad = await app.inject({ url: '/items/x?page=0' });
    expect(bad.status).toBe(400);
    expect(bad.json<{ fields: unknown[] }>().fields).toHaveLength(2);
    expect((await app.inject({ url: '/explicit' })).json()).toEqual({ x: 'given' });
  });
});
