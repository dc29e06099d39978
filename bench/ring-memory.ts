// Heap held by the hub's replay buffer per 100,000 events (not a benchmark of speed; prints only).
// Run: node --expose-gc --import tsx bench/ring-memory.ts
// Each line is the median of 5 builds, measured after GC: a full memory store; the same events
// in a plain array (what the events themselves cost); a ring of Redis-like ids wrapped twice.
import { EventRing } from '../packages/server/src/hub-ring';
import { memoryStore } from '../packages/server/src/memory-store';

const N = 100_000;
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');

function heap(): number {
  for (let i = 0; i < 5; i++) gc!();
  return process.memoryUsage().heapUsed;
}

function measure(label: string, build: () => unknown): void {
  const samples: number[] = [];
  for (let r = 0; r < 5; r++) {
    const before = heap();
    let held: unknown = build();
    samples.push(heap() - before);
    // Kept alive until measured, then let go before the next build.
    if (held === null) console.log('unreachable');
    held = undefined;
  }
  const bytes = samples.sort((a, b) => a - b)[2]!;
  const mib = (bytes / 2 ** 20).toFixed(2);
  console.log(`${label}: ${mib} MiB per ${N} events (${(bytes / N).toFixed(1)} B/event)`);
}

const sink = { deliver() {}, reset() {} };
measure('memoryStore, full', () => {
  const store = memoryStore({ bufferSize: N });
  store.open(sink);
  for (let i = 0; i < N; i++) store.append('n', 'x', undefined);
  return store;
});
measure('the same events in an array', () => {
  const out = [];
  for (let i = 1; i <= N; i++) {
    out.push({ id: `deadbeef-${i}`, event: 'n', data: 'x', topic: undefined });
  }
  return out;
});
measure('EventRing of stream ids, wrapped twice', () => {
  const ring = new EventRing(N, '0-0', () => 0);
  for (let i = 1; i <= 2 * N; i++) {
    ring.push({ id: `1732612345678-${i}`, event: 'n', data: 'x', topic: undefined });
  }
  return ring;
});
