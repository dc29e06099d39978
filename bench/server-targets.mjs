// Child process for server.bench.mjs: starts one framework on a free loopback port and reports
// the port over IPC. Usage (forked): node server-targets.mjs <target> <scenario>
// target: keel | keel-baseline | fastify | hono | express | node; scenario: hello | params | sse
import { createServer } from 'node:http';

const [target, scenario] = process.argv.slice(2);
const ROUTES = 100;

const paramPath = (i) => `/api/v1/resource${i}/:id/items/:itemId`;

async function keel() {
  // keel-baseline: the same app on a build of an earlier revision (see BENCH_BASELINE).
  const entry = target === 'keel-baseline' ? process.env.KEEL_BASELINE_ENTRY : '@keel/server';
  const { createApp, createEventHub } = await import(entry);
  const app = createApp();
  if (scenario === 'hello') app.get('/hello', (ctx) => ctx.json({ hello: 'world' }));
  if (scenario === 'params') {
    for (let i = 0; i < ROUTES; i++) {
      app.get(paramPath(i), (ctx) => ctx.json({ id: ctx.params.id, itemId: ctx.params.itemId }));
    }
  }
  if (scenario === 'sse') {
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
  }
  const server = await app.listen(0, '127.0.0.1');
  return server.address().port;
}

async function fastify() {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false });
  if (scenario === 'hello') app.get('/hello', async () => ({ hello: 'world' }));
  if (scenario === 'params') {
    for (let i = 0; i < ROUTES; i++) {
      app.get(paramPath(i), async (req) => ({ id: req.params.id, itemId: req.params.itemId }));
    }
  }
  await app.listen({ port: 0, host: '127.0.0.1' });
  return app.server.address().port;
}

async function hono() {
  const { Hono } = await import('hono');
  const { serve } = await import('@hono/node-server');
  const app = new Hono();
  if (scenario === 'hello') app.get('/hello', (c) => c.json({ hello: 'world' }));
  if (scenario === 'params') {
    for (let i = 0; i < ROUTES; i++) {
      app.get(paramPath(i), (c) =>
        c.json({ id: c.req.param('id'), itemId: c.req.param('itemId') }),
      );
    }
  }
  return new Promise((resolve) => {
    serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve(info.port));
  });
}

async function express() {
  const { default: Express } = await import('express');
  const app = Express();
  if (scenario === 'hello') app.get('/hello', (_req, res) => res.json({ hello: 'world' }));
  if (scenario === 'params') {
    for (let i = 0; i < ROUTES; i++) {
      app.get(paramPath(i), (req, res) =>
        res.json({ id: req.params.id, itemId: req.params.itemId }),
      );
    }
  }
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(server.address().port));
  });
}

// The floor: node:http with the least work that still routes (a Set lookup for the 100 names).
async function node() {
  const names = new Set(Array.from({ length: ROUTES }, (_, i) => `resource${i}`));
  const server = createServer((req, res) => {
    if (scenario === 'hello' && req.url === '/hello') {
      const body = JSON.stringify({ hello: 'world' });
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      res.end(body);
      return;
    }
    const parts = req.url.split('/');
    if (
      scenario === 'params' &&
      parts.length === 7 &&
      names.has(parts[3]) &&
      parts[5] === 'items'
    ) {
      const body = JSON.stringify({ id: parts[4], itemId: parts[6] });
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      res.end(body);
      return;
    }
    res.writeHead(404);
    res.end();
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(server.address().port)),
  );
}

const targets = { keel, 'keel-baseline': keel, fastify, hono, express, node };
const port = await targets[target]();
process.send?.({ port });
// The bench asks for CPU time around each run: server CPU per request is steadier than req/s on
// a shared machine.
process.on('message', (msg) => {
  if (msg === 'cpu') process.send?.({ cpu: process.cpuUsage() });
});
// Bench servers must not outlive the bench if it dies.
process.on('disconnect', () => process.exit(0));
