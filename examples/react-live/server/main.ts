import { fileURLToPath } from 'node:url';
import { ListenError, portFrom, RedisUnreachableError, startInstance } from './instance';
import { onShutdown } from './shutdown';

/** A mistake in the environment (PORT, HOST, REDIS_URL) is said in one line; anything else keeps its stack. */
function fail(error: unknown): never {
  const said =
    error instanceof RedisUnreachableError ||
    error instanceof ListenError ||
    (error instanceof RangeError && error.message.startsWith('react-live:'));
  console.error(said ? error.message : error);
  process.exit(1);
}

// Serves the built page (run `vite build` first; `npx -y pnpm@10.34.8 start` does both) and the API. With
// REDIS_URL, events and todos live in Redis, so several instances serve the same tabs.
let port = 0;
try {
  // Before Redis is reached: a run that cannot listen connects nothing.
  port = portFrom(process.env.PORT);
} catch (error) {
  fail(error);
}
const instance = await startInstance({
  distDir: process.env.DIST_DIR ?? fileURLToPath(new URL('../dist', import.meta.url)),
  port,
  host: process.env.HOST || '127.0.0.1',
  // Empty (`REDIS_URL= pnpm serve`) is unset: in memory.
  redisUrl: process.env.REDIS_URL || undefined,
}).catch(fail);
const name = process.env.INSTANCE ? ` instance ${process.env.INSTANCE}` : '';
console.log(`keel react-live${name}: ${instance.url}  (open it in two tabs)`);
// Started by cluster.ts: it reads the URL from here.
process.send?.({ url: instance.url });

onShutdown(() => instance.close());
