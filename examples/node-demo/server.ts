import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface User {
  id: number;
  name: string;
}

/** What the demo server did, so scenarios can show the network side of each story. */
export interface DemoServer {
  readonly baseURL: string;
  /** Requests received for a path (query ignored), e.g. `hits('/users')`. */
  hits(path: string): number;
  /**
   * Requests received on every route; with `client`, only those a client sent: the value of its
   * `x-demo-client` header, `'main'` for requests without one.
   */
  totalHits(client?: string): number;
  /** Slow responses the client abandoned mid-way (its socket closed before we answered). */
  readonly abandoned: number;
  /** Takes a path down (every request for it answers 503) or brings it back. */
  setOutage(path: string, down: boolean): void;
  close(): Promise<void>;
}

/**
 * A loopback server that misbehaves on purpose:
 *
 * | route                  | behaviour                                                         |
 * |------------------------|-------------------------------------------------------------------|
 * | `GET /users`, `/users/:id` | a normal JSON API                                             |
 * | `POST /users`          | adds a user (201)                                                 |
 * | `GET /slow?ms=N`       | answers after N ms (default 1500); notices when the client leaves |
 * | `GET /flaky`           | 503 with `Retry-After: 1` (seconds) on its first call, then 200    |
 * | `GET /limited`         | 429 with `Retry-After: <HTTP date>` twice, then 200               |
 * | `GET /inventory`       | a normal JSON API, until `setOutage('/inventory', true)`          |
 * | `GET /work`            | answers after 5 ms (the scheduler's burst)                        |
 * | `GET /saturating`      | 40 ms up to 3 requests in progress, much slower above (see below) |
 *
 * Any path under `setOutage(path, true)` answers 503 until it is brought back.
 *
 * Listens on 127.0.0.1, port 0 (whatever is free): no network beyond loopback.
 */
export async function startDemoServer(): Promise<DemoServer> {
  const users: User[] = [
    { id: 1, name: 'Ada' },
    { id: 2, name: 'Linus' },
    { id: 3, name: 'Barbara' },
  ];
  const counts = new Map<string, number>();
  const byClient = new Map<string, number>();
  const down = new Set<string>();
  let abandoned = 0;
  let saturating = 0;

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://demo.local');
    const path = url.pathname;
    const n = (counts.get(path) ?? 0) + 1;
    counts.set(path, n);
    const client = String(req.headers['x-demo-client'] ?? 'main');
    byClient.set(client, (byClient.get(client) ?? 0) + 1);

    if (down.has(path)) return json(res, 503, { error: 'service unavailable' });
    if (path === '/users' && req.method === 'GET') return json(res, 200, users);
    if (path === '/users' && req.method === 'POST') {
      return readJson(req).then((body) => {
        const user = { id: users.length + 1, name: String((body as Partial<User>).name) };
        users.push(user);
        json(res, 201, user);
      });
    }
    const byId = /^\/users\/(\d+)$/.exec(path);
    if (byId && req.method === 'GET') {
      const user = users.find((u) => u.id === Number(byId[1]));
      return user ? json(res, 200, user) : json(res, 404, { error: 'no such user' });
    }
    if (path === '/slow') {
      const ms = Number(url.searchParams.get('ms') ?? 1500);
      const timer = setTimeout(() => json(res, 200, { slept: ms }), ms);
      // The client aborting its fetch closes the socket: stop working for nobody.
      res.on('close', () => {
        clearTimeout(timer);
        if (!res.writableFinished) abandoned++;
      });
      return;
    }
    if (path === '/flaky') {
      if (n === 1) return json(res, 503, { error: 'warming up' }, { 'retry-after': '1' });
      return json(res, 200, { ok: true, attempt: n });
    }
    if (path === '/limited') {
      if (n <= 2) {
        // An HTTP date one second ahead (dates have one-second precision, so the wait is 0–1 s).
        const at = new Date(Date.now() + 1000).toUTCString();
        return json(res, 429, { error: 'slow down' }, { 'retry-after': at });
      }
      return json(res, 200, { ok: true, attempt: n });
    }
    if (path === '/inventory') return json(res, 200, { widgets: 12, gears: 7 });
    if (path === '/work') {
      setTimeout(() => json(res, 200, { n: url.searchParams.get('n') }), 5);
      return;
    }
    if (path === '/saturating') {
      // A backend that scales up to 3 concurrent requests and thrashes beyond: the service time is
      // fixed when a request arrives, from how many are in progress then (itself included):
      // 1-3: 40 ms, 4: 95 ms, 5: 185 ms, 6: 320 ms, 8: 760 ms. Past 3, every extra request slows
      // everyone down more than it adds, so 8 at a time serve fewer per second than 3 do.
      const inProgress = ++saturating;
      const ms = inProgress <= 3 ? 40 : Math.round(40 * (inProgress / 3) ** 3);
      setTimeout(() => {
        saturating--;
        json(res, 200, { ms, inProgress });
      }, ms);
      return;
    }
    json(res, 404, { error: 'not found' });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}`,
    hits: (path) => counts.get(path) ?? 0,
    totalHits: (client) => {
      if (client !== undefined) return byClient.get(client) ?? 0;
      let total = 0;
      for (const n of counts.values()) total += n;
      return total;
    },
    get abandoned() {
      return abandoned;
    },
    setOutage: (path, isDown) => {
      if (isDown) down.add(path);
      else down.delete(path);
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // Keep-alive sockets would hold the process open: end them too.
        server.closeAllConnections();
      }),
  };
}

function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of req) text += chunk;
  return text === '' ? {} : JSON.parse(text);
}
