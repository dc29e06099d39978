import { afterEach, describe, expect, it } from 'vitest';
import { type Client, createClient } from '../src/index';
import { collected, gc } from './gc-helpers';
import { startServer, type TestServer } from './helpers';

// A client nothing else refers to is collected once its requests are over. The one module-level
// state of the core that refers to a request, the shared executor's slot, keeps the process's
// last caller's functions until the next request of any client replaces them: bounded to one.

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('a client dropped after its requests', () => {
  it.each([
    ['succeeded', 200],
    ['failed with HTTP 500', 500],
  ])('is collected when its last request %s', async (_, status) => {
    server = await startServer({
      '/x': (_req, res) => {
        res.writeHead(status, { 'content-type': 'application/json', connection: 'close' });
        res.end('{"big":true}');
      },
    });
    let client: Client | undefined = createClient({ baseURL: server.url, retry: false });
    const ref = new WeakRef(client);
    await client.get('/x').catch(() => {});
    client = undefined;
    expect(await collected(ref, createClient)).toBe(true);
  });

  it('is collected when its last request was refused (nothing listens)', async () => {
    let client: Client | undefined = createClient({ baseURL: 'http://127.0.0.1:9', retry: false });
    const ref = new WeakRef(client);
    await expect(client.get('/x')).rejects.toThrow();
    client = undefined;
    expect(await collected(ref, createClient)).toBe(true);
  });

  it('is held by the executor slot only until another request is made (one request at most)', async () => {
    let client: Client | undefined = createClient({
      baseURL: 'http://127.0.0.1:1',
      fetch: () => new Response('{}'),
    });
    const ref = new WeakRef(client);
    await client.get('/x');
    client = undefined;
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      gc();
    }
    // Still held: its promise's functions are the slot's last pair.
    expect(ref.deref()).toBeDefined();
    expect(await collected(ref, createClient)).toBe(true);
  });
});
