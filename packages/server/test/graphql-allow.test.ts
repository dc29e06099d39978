import { describe, expect, it } from 'vitest';
import { raw, start, trackApps } from './helpers';

// A GraphQL endpoint mounted for every method (`app.all`) answered OPTIONS with a 405 and sent
// `Allow: GET, POST` on its 405s, where the app's own 405 for a routed path lists HEAD (answered
// as GET) and OPTIONS (answered 204 with Allow on every routed path).

const app = trackApps();
const SDL = 'type Query { hello: String! }';

describe('ctx.graphql Allow', () => {
  it('a method GraphQL does not take: 405 with the Allow of a GET + POST route', async () => {
    const a = app();
    a.all('/all', (ctx) => ctx.graphql(SDL, { hello: () => 'hi' }));
    a.get('/split', (ctx) => ctx.graphql(SDL, { hello: () => 'hi' }));
    a.post('/split', (ctx) => ctx.graphql(SDL, { hello: () => 'hi' }));
    const { port } = await start(a);
    const own = await raw(port, { method: 'PUT', path: '/split' });
    const gql = await raw(port, { method: 'PUT', path: '/all' });
    expect(own.status).toBe(405);
    expect(gql.status).toBe(405);
    expect(gql.headers.allow).toBe(own.headers.allow);
    expect(gql.headers.allow).toBe('GET, POST, HEAD, OPTIONS');
    expect(JSON.parse(gql.body).errors[0].message).toBe('GraphQL accepts only GET and POST.');
  });

  it('OPTIONS is answered as on any routed path: 204 with Allow', async () => {
    const a = app();
    a.all('/all', (ctx) => ctx.graphql(SDL, { hello: () => 'hi' }));
    a.get('/split', (ctx) => ctx.graphql(SDL, { hello: () => 'hi' }));
    a.post('/split', (ctx) => ctx.graphql(SDL, { hello: () => 'hi' }));
    const { port } = await start(a);
    const own = await raw(port, { method: 'OPTIONS', path: '/split' });
    const gql = await raw(port, { method: 'OPTIONS', path: '/all' });
    expect(own.status).toBe(204);
    expect(gql.status).toBe(204);
    expect(gql.headers.allow).toBe(own.headers.allow);
    expect(gql.body).toBe('');
  });
});
