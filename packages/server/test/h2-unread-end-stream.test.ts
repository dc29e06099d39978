// A body nobody reads on an attached HTTP/2 server (a 413 counted as it streams in, a 404, a
// handler that never reads it): keel closes the stream with RST_STREAM NO_ERROR once its answer
// went out whole (RFC 9113 §8.1). It reset on the response's 'finish', which comes before nghttp2
// has written the frame carrying END_STREAM: the RST went out first, the response never ended on
// the wire, and a Node client uploading with write/drain never saw its stream close (plain Node,
// END_STREAM then RST, closes it). Real node:http2 clients on loopback.
import { type ClientHttp2Stream, createServer as createHttp2Server } from 'node:http2';
import { describe, expect, it } from 'vitest';
import { createApp } from '../src/index';
import { h2Fixture } from './h2-helpers';
import { until } from './helpers';

const { apps, listen, connect } = h2Fixture();

describe('HTTP/2: the answer to a body nobody reads', () => {
  it.each([
    ['413', '/json'],
    ['404', '/nowhere'],
    ['200 unread', '/ignore'],
  ])('%s: ends with END_STREAM, then the stream closes on the client', async (_, path) => {
    const app = createApp({ bodyLimit: 1024, keepAliveTimeout: 0 });
    apps.push(app);
    app.post('/json', (ctx) => ctx.json({ n: 1 }));
    app.post('/ignore', (ctx) => ctx.send('ignored'));
    const port = await listen(app, createHttp2Server(app.handler));
    const s = connect(`http://127.0.0.1:${port}`);
    const stream: ClientHttp2Stream = s.request(
      { ':method': 'POST', ':path': path, 'content-type': 'application/json' },
      { endStream: false },
    );
    const seen: string[] = [];
    stream.on('response', (h) => seen.push(`response ${h[':status']}`));
    stream.on('end', () => seen.push('end'));
    stream.on('close', () => seen.push(`close ${stream.rstCode}`));
    stream.on('error', () => {});
    stream.resume();
    // As an upload is written: on, while the stream takes it, then ended.
    const chunk = Buffer.alloc(16_384, 0x20);
    let sent = 0;
    const pump = (): void => {
      while (sent < 5 * 1024 * 1024) {
        sent += chunk.length;
        if (!stream.write(chunk)) {
          stream.once('drain', pump);
          return;
        }
      }
      stream.end();
    };
    pump();
    await until(() => seen.some((e) => e.startsWith('close')));
    expect(seen[1]).toBe('end');
    expect(seen.at(-1)).toBe('close 0');
  });
});
