/**
 * A loopback node:http server (127.0.0.1, port 0) that fails on purpose, the way real servers
 * and networks do. The fault is the path: `/<fault>?<params>`, so one server serves every
 * scenario and a soak can pick one per request.
 *
 * | path                 | what happens                                                        |
 * |----------------------|---------------------------------------------------------------------|
 * | /ok                  | 200 JSON `{ok: true, id}` (params: `ms` delay before the headers)    |
 * | /reset-headers       | TCP reset before any response byte                                  |
 * | /reset-body          | headers and part of a Content-Length body, then a TCP reset         |
 * | /short-body          | Content-Length 100, 10 bytes, then the connection ends              |
 * | /invalid-json        | 200 application/json whose body does not parse                      |
 * | /slow-headers        | headers after `ms`                                                  |
 * | /trickle             | a 200 body in `chunks` chunks of 16 bytes, one every `ms`           |
 * | /no-answer           | never answers (only the client's abort ends it)                     |
 * | /status              | `status` (default 503) with `ra` as Retry-After when given          |
 * | /storm               | 503/500/429/502/504 (or `status`) for the first `fail` requests of    |
 * |                      | `key`, with `ra` as Retry-After when given; then 200                 |
 * | /redirect-loop       | 302 to itself                                                       |
 * | /binary              | 200 application/octet-stream: bytes 0..255, `n` times               |
 * | /huge                | 200 octet-stream, chunked, `mb` MiB of 64 KiB chunks                |
 *
 * `refusedURL()` gives a URL whose port refuses connections. `requests` counts requests per
 * path; `aborted` counts responses the client abandoned before they finished.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Socket } from 'node:net';

export interface FaultServer {
  url: string;
  /** Requests received, per pathname. */
  requests: Map<string, number>;
  /** Responses the client went away from before they finished. */
  readonly aborted: number;
  /** Open TCP connections now. */
  readonly open: number;
  close(): Promise<void>;
}

export const BYTES = Uint8Array.from({ length: 256 }, (_, i) => i);

type Fault = (req: IncomingMessage, res: ServerResponse, q: URLSearchParams) => void;

const num = (q: URLSearchParams, name: string, fallback: number) => {
  const v = q.get(name);
  return v === null ? fallback : Number(v);
};

/** Writes headers and nothing else, then resets the TCP connection. */
function resetAfter(res: ServerResponse, write: () => void, ms: number): void {
  write();
  const timer = setTimeout(() => res.socket?.resetAndDestroy(), ms);
  res.on('close', () => clearTimeout(timer));
}

export async function startFaultServer(): Promise<FaultServer> {
  const sockets = new Set<Socket>();
  const requests = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  const storms = new Map<string, number>();
  let aborted = 0;

  /** A timer that dies with the server (close() clears what is left). */
  const later = (res: ServerResponse, ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
    res.on('close', () => {
      clearTimeout(t);
      timers.delete(t);
    });
  };

  const faults: Record<string, Fault> = {
    '/ok': (_req, res, q) => {
      const body = JSON.stringify({ ok: true, id: q.get('id') });
      later(res, num(q, 'ms', 0), () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
      });
    },
    '/reset-headers': (req) => {
      req.socket.resetAndDestroy();
    },
    '/reset-body': (_req, res, q) => {
      resetAfter(
        res,
        () => {
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
          res.write('{"partial":');
        },
        num(q, 'ms', 5),
      );
    },
    '/short-body': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '100' });
      res.write('0123456789');
      // End the connection with 90 bytes still owed.
      later(res, 2, () => res.socket?.end());
    },
    '/invalid-json': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"a": [1, 2');
    },
    '/slow-headers': (_req, res, q) => {
      later(res, num(q, 'ms', 100), () => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('late');
      });
    },
    '/trickle': (_req, res, q) => {
      const chunks = num(q, 'chunks', 5);
      const ms = num(q, 'ms', 10);
      res.writeHead(200, { 'content-type': 'text/plain' });
      let sent = 0;
      const next = () => {
        if (sent === chunks) {
          res.end();
          return;
        }
        sent++;
        res.write('x'.repeat(16));
        later(res, ms, next);
      };
      next();
    },
    '/no-answer': () => {
      // never answers
    },
    '/status': (_req, res, q) => {
      const headers: Record<string, string> = { 'content-type': 'text/plain' };
      const ra = q.get('ra');
      if (ra !== null) headers['retry-after'] = ra;
      res.writeHead(num(q, 'status', 503), headers);
      res.end('status');
    },
    '/storm': (_req, res, q) => {
      const key = q.get('key') ?? '';
      const seen = (storms.get(key) ?? 0) + 1;
      storms.set(key, seen);
      if (seen <= num(q, 'fail', 2)) {
        const statuses = [503, 500, 429, 502, 504];
        const headers: Record<string, string> = {};
        const ra = q.get('ra');
        if (ra !== null) headers['retry-after'] = ra;
        res.writeHead(num(q, 'status', statuses[seen % statuses.length]!), headers);
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ key, after: seen }));
    },
    '/redirect-loop': (req, res) => {
      res.writeHead(302, { location: req.url ?? '/redirect-loop' });
      res.end();
    },
    '/binary': (_req, res, q) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      for (let i = 0; i < num(q, 'n', 1); i++) res.write(Buffer.from(BYTES));
      res.end();
    },
    '/huge': (_req, res, q) => {
      const total = num(q, 'mb', 16) * 1024 * 1024;
      const chunk = Buffer.alloc(64 * 1024, 7);
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      let sent = 0;
      const pump = () => {
        while (sent < total) {
          sent += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      pump();
    },
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.set(url.pathname, (requests.get(url.pathname) ?? 0) + 1);
    res.on('close', () => {
      if (!res.writableFinished) aborted++;
    });
    const fault = faults[url.pathname];
    if (fault === undefined) {
      res.writeHead(404);
      res.end();
      return;
    }
    fault(req, res, url.searchParams);
  });
  server.keepAliveTimeout = 5000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    // A reset connection reports ECONNRESET on the server side too: not a test failure.
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get aborted() {
      return aborted;
    },
    get open() {
      return sockets.size;
    },
    close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A loopback URL whose port refuses connections (a port just bound, then released). */
export async function refusedURL(): Promise<string> {
  const probe = createTcpServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
