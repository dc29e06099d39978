import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// GC tests only: importing this exposes `gc` to the process.
setFlagsFromString('--expose_gc');
export const gc = runInNewContext('gc') as () => void;

/** What `createClient` a suite tests (core's sources, or the package a sibling imports). */
type MakeClient = (options: { fetch: () => Response; baseURL: string }) => {
  get(url: string): Promise<unknown>;
};

/**
 * Whether `ref`'s object is collected. One request of another client first: the core keeps the
 * last caller's promise functions until the next request of any client (a bounded trade-off for
 * join speed, see Consumer in dedup/flight.ts). `createClient` must be the one the suite tests:
 * that module's slot is the one to move on.
 */
export async function collected(ref: WeakRef<object>, createClient: MakeClient): Promise<boolean> {
  const other = createClient({ fetch: () => new Response('{}'), baseURL: 'http://127.0.0.1:1' });
  await other.get('/other');
  for (let i = 0; i < 20 && ref.deref() !== undefined; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    gc();
  }
  return ref.deref() === undefined;
}
