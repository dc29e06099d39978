// Child for hub.bench.mjs: one SSE fan-out server on a free loopback port, reported over IPC.
// Usage (forked): node hub-targets.mjs <target> <publish>
//   target: floor | memory | redis | better-sse; publish: 1 = publish an event every 100 ms
//   (10 events/s) carrying its send time from the start, 0 = only on 'start' (until 'stop').
//   redis: REDIS_URL and STREAM from the environment.
// Messages: 'cpu' -> { cpu } and { published }, 'mem' -> { mem } (after GC), 'clients' -> { clients }.
import { createServer } from 'node:http';

const [target, publishArg] = process.argv.slice(2);
const PUBLISH = publishArg === '1';
let publish;
let clientCount;

// The floor: node:http, one Set of responses, each event formatted once and written to all.
async function floor() {
  const clients = new Set();
  let id = 0;
  const server = createServer((_req, res) => {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
    });
    res.flushHeaders();
    clients.add(res);
    res.on('close', () => clients.delete(res));
  });
  publish = (data) => {
    const frame = Buffer.from(`id: ${++id}\nevent: tick\ndata: ${JSON.stringify(data)}\n\n`);
    for (const res of clients) res.write(frame);
  };
  clientCount = () => clients.size;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server.address().port;
}

async function keel(store) {
  const { createApp, createEventHub } = await import('@keel/server');
  const app = createApp();
  const hub = createEventHub(store ? { store } : {});
  await hub.ready;
  app.get('/events', (ctx) => hub.connect(ctx));
  publish = (data) => {
    hub.publish('tick', data).catch(() => {});
  };
  clientCount = () => hub.size;
  const server = await app.listen(0, '127.0.0.1');
  return server.address().port;
}

async function redis() {
  const { redisStreams } = await import('@keel/server/redis');
  return keel(redisStreams({ url: process.env.REDIS_URL, stream: process.env.STREAM }));
}

async function betterSse() {
  const { createChannel, createSession } = await import('better-sse');
  const channel = createChannel();
  const server = createServer(async (req, res) => {
    const session = await createSession(req, res, { keepAlive: null });
    channel.register(session);
  });
  publish = (data) => channel.broadcast(data, 'tick');
  clientCount = () => channel.sessionCount;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server.address().port;
}

const targets = { floor, memory: () => keel(), redis, 'better-sse': betterSse };
const port = await targets[target]();
let published = 0;
let timer = null;
const startPublishing = () => {
  timer ??= setInterval(() => {
    published++;
    publish({ t: Date.now() });
  }, 100);
};
if (PUBLISH) startPublishing();
process.send?.({ port });
process.on('message', (msg) => {
  if (msg === 'cpu') process.send?.({ cpu: process.cpuUsage() });
  if (msg === 'mem') {
    globalThis.gc?.();
    process.send?.({ mem: process.memoryUsage() });
  }
  if (msg === 'clients') process.send?.({ clients: clientCount() });
  if (msg === 'start') startPublishing();
  if (msg === 'stop') {
    clearInterval(timer);
    timer = null;
  }
  // Read with the CPU time: deliveries in a window = events published in it x clients.
  if (msg === 'cpu') process.send?.({ published });
});
// Bench servers must not outlive the bench if it dies.
process.on('disconnect', () => process.exit(0));
