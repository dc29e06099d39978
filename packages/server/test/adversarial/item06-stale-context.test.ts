// Item 6: in production, a ctx kept past its response must never answer another client.
import { Agent } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { raw } from '../helpers';
import { type ServerProcess, spawnServer } from './harness';

let server: ServerProcess;
beforeAll(async () => {
  server = await spawnServer('leak', { NODE_ENV: 'production' });
});
afterAll(() => server.stop());

describe('item 6: a stale ctx is detected in production, under 10,000 interleaved requests', () => {
  it('every client gets its own answer; every late use is reported', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 24 });
    const total = 10_000;
    let next = 0;
    let leaks = 0;
    const wrong: string[] = [];
    async function worker(): Promise<void> {
      while (next < total) {
        const i = next++;
        const kind = i % 2 === 0 ? 'leak' : 'victim';
        if (kind === 'leak') leaks++;
        const res = await raw(server.port, { path: `/${kind}/${i}`, agent });
        const body = JSON.parse(res.body) as { from: string; n: string; late?: boolean };
        if (res.status !== 200 || body.from !== kind || body.n !== String(i) || body.late) {
          wrong.push(`${kind}/${i} got ${res.status} ${res.body}`);
        }
      }
    }
    await Promise.all(Array.from({ length: 24 }, worker));
    agent.destroy();
    await sleep(20); // the last timers fire
    await server.expectAlive();
    expect(wrong).toEqual([]);
    const stats = JSON.parse((await raw(server.port, { path: '/stats' })).body);
    expect(stats.production).toBe('production');
    expect(stats.other).toEqual([]);
    // Each leaked ctx made one late call (status().json() is reported once per ctx).
    expect(stats.stale).toBe(leaks);
  }, 120_000);
});
