import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { type Client, createClient } from '../src/index';
import { startServer, type TestServer } from './helpers';

// A client nothing else refers to is collected once its requests are over: no module-level
// state of the core (a shared executor's slot, a registry) holds it, its last promise or answer.

setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;

async function collected(ref: WeakRef<object>): Promise<boolean> {
  for (let i = 0; i < 20 && ref.deref() !== undefined; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    gc();
  }
  return ref.deref() === undefined;
}

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
    expect(await collected(ref)).toBe(true);
  });

  it('is collected when its last request was refused (nothing listens)', async () => {
    let client: Client | undefined = createClient({ baseURL: 'http://127.0.0.1:9', retry: false });
    const ref = new WeakRef(client);
    await expect(client.get('/x')).rejects.toThrow();
    client = undefined;
    expect(await collected(ref)).toBe(true);
  });
});
