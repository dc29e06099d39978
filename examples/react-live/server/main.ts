import { fileURLToPath } from 'node:url';
import { RedisUnreachableError, startInstance } from './instance';
import { onShutdown } from './shutdown';

// Serves the built page (run `vite build` first; `npx -y pnpm@10.34.8 start` does both) and the API. With
// REDIS_URL, events and todos live in Redis, so several instances serve the same tabs.
const instance = await startInstance({
  distDir: process.env.DIST_DIR ?? fileURLToPath(new URL('../dist', import.meta.url)),
  port: Number(process.env.PORT ?? 0),
  host: process.env.HOST ?? '127.0.0.1',
  redisUrl: process.env.REDIS_URL,
}).catch((error: unknown) => {
  // A wrong REDIS_URL is said in one line; anything else keeps its stack.
  console.error(error instanceof RedisUnreachableError ? error.message : error);
  process.exit(1);
});
const name = process.env.INSTANCE ? ` instance ${process.env.INSTANCE}` : '';
console.log(`keel react-live${name}: ${instance.url}  (open it in two tabs)`);
// Started by cluster.ts: it reads the URL from here.
process.send?.({ url: instance.url });

onShutdown(() => instance.close());
