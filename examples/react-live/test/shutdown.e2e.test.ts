import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { until } from '../../../scripts/until.mjs';

// `pnpm start:cluster` stopped with Ctrl-C: the terminal sends SIGINT to the whole process group,
// and tsx relays it to its child a second time when it misses the child's own report of it. A
// second signal while shutting down must not cut the shutdown short.

const root = fileURLToPath(new URL('..', import.meta.url));
const TSX = join(root, 'node_modules/.bin/tsx');

let child: ChildProcess | undefined;
let tmp: string | undefined;

afterEach(() => {
  if (child?.pid !== undefined && groupAlive(child.pid)) process.kill(-child.pid, 'SIGKILL');
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether something accepts connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

it('Ctrl-C (SIGINT to the group, twice) stops the instances and the redis-server and removes its dir', async () => {
  // The cluster's redis-server makes its temp dir under TMPDIR: a dir of this test's own.
  tmp = mkdtempSync(join(tmpdir(), 'keel-react-live-shutdown-'));
  // As `npx -y pnpm@10.34.8 start:cluster` runs it (after its vite build), in a process group of
  // its own as a terminal's foreground job.
  const proc = spawn(TSX, ['--tsconfig', '../../tsconfig.json', 'server/cluster.ts'], {
    cwd: root,
    detached: true,
    env: { ...process.env, TMPDIR: tmp, REDIS_URL: undefined },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child = proc;
  let out = '';
  proc.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  await until(() => out.includes('Redis:') || proc.exitCode !== null, 'the cluster', 30_000);
  const ports = [...out.matchAll(/(?:http|redis):\/\/127\.0\.0\.1:(\d+)/g)].map((m) =>
    Number(m[1]),
  );
  expect(ports).toHaveLength(3); // A, B, Redis
  expect(readdirSync(tmp).filter((name) => name.startsWith('keel-redis-'))).toHaveLength(1);
  for (const port of ports) expect(await listening(port)).toBe(true);

  const pgid = proc.pid as number;
  process.kill(-pgid, 'SIGINT');
  await new Promise((r) => setTimeout(r, 50));
  // The group may already be gone (ESRCH): a fast shutdown is what is tested.
  if (groupAlive(pgid)) {
    try {
      process.kill(-pgid, 'SIGINT');
    } catch {}
  }
  await until(() => !groupAlive(pgid), 'every process of the group to exit', 20_000);

  for (const port of ports) expect(await listening(port)).toBe(false);
  expect(readdirSync(tmp).filter((name) => name.startsWith('keel-redis-'))).toEqual([]);
});

/** The pid of the process whose environment holds every one of `vars` (Linux /proc). */
function findProcess(vars: string[]): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const env = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (vars.every((v) => env.includes(v))) return Number(entry);
    } catch {
      // Gone, or not ours.
    }
  }
  return undefined;
}

it('an instance that dies stops the cluster: it says which, stops the rest, exits 1', async () => {
  tmp = mkdtempSync(join(tmpdir(), 'keel-react-live-crash-'));
  const proc = spawn(TSX, ['--tsconfig', '../../tsconfig.json', 'server/cluster.ts'], {
    cwd: root,
    detached: true,
    env: { ...process.env, TMPDIR: tmp, REDIS_URL: undefined },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = proc;
  let out = '';
  let err = '';
  proc.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  proc.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  await until(() => out.includes('Redis:') || proc.exitCode !== null, 'the cluster', 30_000);
  const ports = [...out.matchAll(/(?:http|redis):\/\/127\.0\.0\.1:(\d+)/g)].map((m) =>
    Number(m[1]),
  );
  expect(ports).toHaveLength(3);
  const a = findProcess(['INSTANCE=A', `TMPDIR=${tmp}`]);
  expect(a).toBeDefined();
  process.kill(a!, 'SIGKILL');

  const pgid = proc.pid as number;
  await until(() => !groupAlive(pgid), 'every process of the group to exit', 20_000);
  expect(proc.exitCode).toBe(1);
  expect(err).toContain('react-live: instance A exited (signal SIGKILL); stopping the cluster');
  for (const port of ports) expect(await listening(port)).toBe(false);
  expect(readdirSync(tmp).filter((name) => name.startsWith('keel-redis-'))).toEqual([]);
});
