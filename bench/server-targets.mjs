// Child process for server.bench.mjs: starts one server on a free loopback port and reports the
// port over IPC. Usage (forked): node server-targets.mjs <target> [sse]
// target: keel | keel-handler | keel-baseline | fastify | hono | express | node
//
// Every target serves the same realistic app: 100 routes, static, one-param and two-param, with
// the two measured routes in the middle of the registration order (a router that scans in order
// pays for the 49 routes before them):
//   GET /hello                                 -> {"hello":"world"}        (route 49, static)
//   GET /api/v1/resource50/:id/items/:itemId   -> {"id":..,"itemId":..}    (route 50, two params)
//   POST /api/v1/users, a JSON body             -> 201 {"id":1,"name":..,"email":..}
//     (registered last: `name` a non-empty string, `email` an address, both required; each
//     server validates the body its usual way: keel's ctx.validate with the rules written in the
//     handler, as its README does; Fastify a JSON schema; the others by hand)
// With `sse`, keel serves the event-hub scenario instead.
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';

const [target, mode] = process.argv.slice(2);
const ROUTES = 100;

/** The app's routes, in registration order: kind, path, and what a request there answers. */
export function routeTable() {
  const routes = [];
  for (let i = 0; i < ROUTES; i++) {
    if (i === 49) routes.push({ kind: 'hello', path: '/hello' });
    else if (i === 50 || i % 3 === 2) {
      routes.push({ kind: 'two', path: `/api/v1/resource${i}/:id/items/:itemId` });
    } else if (i % 3 === 1) routes.push({ kind: 'one', path: `/api/v1/users${i}/:id` });
    else routes.push({ kind: 'static', path: `/api/v1/static${i}` });
  }
  return routes;
}

/** The POST route: its path, and the body the bench sends. */
export const USERS_PATH = '/api/v1/users';
export const USER_BODY = JSON.stringify({
  name: 'Ada Lovelace',
  email: 'ada@example.com',
  age: 36,
  tags: ['math', 'engines'],
});
/** What the servers that validate by hand accept as an address (keel's and Ajv's are stricter). */
const ADDRESS = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
const isUser = (b) =>
  typeof b === 'object' &&
  b !== null &&
  typeof b.name === 'string' &&
  b.name.length > 0 &&
  typeof b.email === 'string' &&
  ADDRESS.test(b.email);

/** Fastify's response schemas (fast-json-stringify), as its docs recommend. */
const SCHEMAS = {
  hello: { type: 'object', properties: { hello: { type: 'string' } } },
  two: { type: 'object', properties: { id: { type: 'string' }, itemId: { type: 'string' } } },
  one: { type: 'object', properties: { id: { type: 'string' } } },
  static: { type: 'object', properties: { ok: { type: 'boolean' } } },
};

async function keelApp(entry) {
  const { createApp } = await import(entry);
  const app = createApp();
  for (const { kind, path } of routeTable()) {
    if (kind === 'hello') app.get(path, (ctx) => ctx.json({ hello: 'world' }));
    else if (kind === 'two') {
      app.get(path, (ctx) => ctx.json({ id: ctx.params.id, itemId: ctx.params.itemId }));
    } else if (kind === 'one') app.get(path, (ctx) => ctx.json({ id: ctx.params.id }));
    else app.get(path, (ctx) => ctx.json({ ok: true }));
  }
  app.post(USERS_PATH, (ctx) => {
    const user = ctx.validate({
      name: { type: 'string', required: true, min: 1 },
      email: { type: 'email', required: true },
    });
    return ctx.status(201).json({ id: 1, name: user.name, email: user.email });
  });
  return app;
}

async function keelSse() {
  const { createApp, createEventHub } = await import('@keel/server');
  const app = createApp();
  const hub = createEventHub({ bufferSize: 100 });
  app.get('/events', (ctx) => hub.connect(ctx));
  app.get('/mem', (ctx) => {
    globalThis.gc?.();
    return ctx.json({
      ...process.memoryUsage(),
      clients: hub.size,
      published: hub.metrics.published,
    });
  });
  // 10 events/s; the payload carries the send time for the latency measurement.
  setInterval(() => hub.publish('tick', { t: Date.now() }), 100);
  const server = await app.listen(0, '127.0.0.1');
  return server.address().port;
}

/** keel through `app.listen()`. */
async function keel() {
  if (mode === 'sse') return keelSse();
  const server = await (await keelApp('@keel/server')).listen(0, '127.0.0.1');
  return server.address().port;
}

/** keel mounted the way users put it in their own server: `http.createServer(app.handler)`. */
async function keelHandler() {
  const app = await keelApp('@keel/server');
  const server = createServer(app.handler);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(server.address().port)),
  );
}

/** The same app on a build of an earlier revision (see BENCH_BASELINE). */
async function keelBaseline() {
  const server = await (await keelApp(process.env.KEEL_BASELINE_ENTRY)).listen(0, '127.0.0.1');
  return server.address().port;
}

async function fastify() {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false });
  for (const { kind, path } of routeTable()) {
    const schema = { response: { 200: SCHEMAS[kind] } };
    if (kind === 'hello') app.get(path, { schema }, async () => ({ hello: 'world' }));
    else if (kind === 'two') {
      app.get(path, { schema }, async (req) => ({ id: req.params.id, itemId: req.params.itemId }));
    } else if (kind === 'one') app.get(path, { schema }, async (req) => ({ id: req.params.id }));
    else app.get(path, { schema }, async () => ({ ok: true }));
  }
  const userSchema = {
    body: {
      type: 'object',
      required: ['name', 'email'],
      properties: {
        name: { type: 'string', minLength: 1 },
        email: { type: 'string', format: 'email' },
      },
    },
    response: {
      201: {
        type: 'object',
        properties: { id: { type: 'number' }, name: { type: 'string' }, email: { type: 'string' } },
      },
    },
  };
  app.post(USERS_PATH, { schema: userSchema }, async (req, reply) => {
    reply.code(201);
    return { id: 1, name: req.body.name, email: req.body.email };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return app.server.address().port;
}

async function hono() {
  const { Hono } = await import('hono');
  const { serve } = await import('@hono/node-server');
  const app = new Hono();
  for (const { kind, path } of routeTable()) {
    if (kind === 'hello') app.get(path, (c) => c.json({ hello: 'world' }));
    else if (kind === 'two') {
      app.get(path, (c) => c.json({ id: c.req.param('id'), itemId: c.req.param('itemId') }));
    } else if (kind === 'one') app.get(path, (c) => c.json({ id: c.req.param('id') }));
    else app.get(path, (c) => c.json({ ok: true }));
  }
  app.post(USERS_PATH, async (c) => {
    let body;
    try {
      body = await c.req.json();
    } catch {
      return c.json({ error: 'invalid JSON' }, 400);
    }
    if (!isUser(body)) return c.json({ error: 'invalid user' }, 400);
    return c.json({ id: 1, name: body.name, email: body.email }, 201);
  });
  return new Promise((resolve) => {
    serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve(info.port));
  });
}

async function express() {
  const { default: Express } = await import('express');
  const app = Express();
  for (const { kind, path } of routeTable()) {
    if (kind === 'hello') app.get(path, (_req, res) => res.json({ hello: 'world' }));
    else if (kind === 'two') {
      app.get(path, (req, res) => res.json({ id: req.params.id, itemId: req.params.itemId }));
    } else if (kind === 'one') app.get(path, (req, res) => res.json({ id: req.params.id }));
    else app.get(path, (_req, res) => res.json({ ok: true }));
  }
  app.post(USERS_PATH, Express.json(), (req, res) => {
    if (!isUser(req.body)) return res.status(400).json({ error: 'invalid user' });
    res.status(201).json({ id: 1, name: req.body.name, email: req.body.email });
  });
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(server.address().port));
  });
}

/**
 * The floor: node:http with the least work that still routes the same 100 routes (a Map for the
 * static paths, the segments of the URL checked against Sets for the param routes).
 */
async function node() {
  const statics = new Map();
  const one = new Set();
  const two = new Set();
  for (const { kind, path } of routeTable()) {
    if (kind === 'hello') statics.set(path, { hello: 'world' });
    else if (kind === 'static') statics.set(path, { ok: true });
    else (kind === 'one' ? one : two).add(path.split('/')[3]);
  }
  const send = (res, value, status = 200) => {
    const body = JSON.stringify(value);
    // The same header keel sends (the floor answers byte for byte what keel does).
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  };
  const server = createServer((req, res) => {
    const url = req.url;
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (req.method === 'POST' && path === USERS_PATH) {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        let body;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return send(res, { error: 'invalid JSON' }, 400);
        }
        if (!isUser(body)) return send(res, { error: 'invalid user' }, 400);
        send(res, { id: 1, name: body.name, email: body.email }, 201);
      });
      return;
    }
    const fixed = statics.get(path);
    if (fixed !== undefined) return send(res, fixed);
    const parts = path.split('/');
    if (parts.length === 5 && one.has(parts[3])) return send(res, { id: parts[4] });
    if (parts.length === 7 && two.has(parts[3]) && parts[5] === 'items') {
      return send(res, { id: parts[4], itemId: parts[6] });
    }
    res.writeHead(404);
    res.end();
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(server.address().port)),
  );
}

const targets = {
  keel,
  'keel-handler': keelHandler,
  'keel-baseline': keelBaseline,
  fastify,
  hono,
  express,
  node,
};
// Only as the forked entry point (the table above is imported by other scripts too).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const port = await targets[target]();
  process.send?.({ port });
  // The bench asks for CPU time around each run: server CPU per request is steadier than req/s
  // on a shared machine.
  process.on('message', (msg) => {
    if (msg === 'cpu') process.send?.({ cpu: process.cpuUsage() });
  });
  // Bench servers must not outlive the bench if it dies.
  process.on('disconnect', () => process.exit(0));
}
