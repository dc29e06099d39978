import {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type Http2SecureServer,
  type Http2Server,
  connect as h2connect,
  type SecureClientSessionOptions,
} from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import type { App } from '../src/index';

export interface H2Fixture {
  /** Apps closed after each test: push every app a test makes. */
  apps: App[];
  /** Attaches `server` to `app` and listens on 127.0.0.1 port 0; resolves with the port. */
  listen(app: App, server: Http2Server | Http2SecureServer): Promise<number>;
  /** A client session, destroyed after each test; its errors are the tests' to observe. */
  connect(url: string, options?: SecureClientSessionOptions): ClientHttp2Session;
}

/**
 * The setup the HTTP/2 tests share: call once at a file's top level (it registers the afterEach
 * that destroys the sessions, then closes the apps, so nothing outlives its test).
 */
export function h2Fixture(): H2Fixture {
  const apps: App[] = [];
  const sessions: ClientHttp2Session[] = [];
  afterEach(async () => {
    for (const s of sessions.splice(0)) s.destroy();
    await Promise.all(apps.splice(0).map((a) => a.close({ timeoutMs: 100 })));
  });
  return {
    apps,
    async listen(app, server) {
      app.attach(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return (server.address() as AddressInfo).port;
    },
    connect(url, options) {
      const s = h2connect(url, options);
      // A session reset by the server emits 'error'; unhandled it would fail the run.
      s.on('error', () => {});
      sessions.push(s);
      return s;
    },
  };
}

/** Reads a whole response on `s`. */
export function fetchText(s: ClientHttp2Session, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stream = s.request({ ':path': path });
    let body = '';
    stream.setEncoding('utf8');
    stream.on('data', (c: string) => {
      body += c;
    });
    stream.on('end', () => resolve(body));
    stream.on('error', reject);
  });
}

/** A response as it arrives: status, body so far, whether it ended (its errors ignored). */
export interface Reply {
  status: number;
  body: string;
  ended: boolean;
  stream: ClientHttp2Stream;
}

/** Collects `stream`'s response into a Reply, updated as it comes. */
export function collect(stream: ClientHttp2Stream): Reply {
  const reply: Reply = { status: 0, body: '', ended: false, stream };
  stream.on('error', () => {});
  stream.on('response', (h) => {
    reply.status = Number(h[':status']);
  });
  stream.setEncoding('utf8');
  stream.on('data', (c: string) => {
    reply.body += c;
  });
  stream.on('end', () => {
    reply.ended = true;
  });
  return reply;
}
