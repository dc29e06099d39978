import { fileURLToPath } from 'node:url';
import { createLiveApp } from './app';

// Serves the built page (run `vite build` first; `pnpm start` does both) and the API.
const distDir = fileURLToPath(new URL('../dist', import.meta.url));
const port = Number(process.env.PORT ?? 0);
const host = process.env.HOST ?? '127.0.0.1';
const { app } = createLiveApp({ distDir });
const server = await app.listen(port, host);
const address = server.address();
const actualPort = typeof address === 'object' && address ? address.port : port;
console.log(`keel react-live: http://${host}:${actualPort}  (open it in two tabs)`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void app.close().then(() => process.exit(0));
  });
}
