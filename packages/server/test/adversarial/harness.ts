import { type ChildProcess, fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect } from 'vitest';
import { raw } from '../helpers';

const tsx = createRequire(import.meta.url).resolve('tsx');

/** An app running in its own Node process, so a crash shows as that process exiting. */
export interface ServerProcess {
  port: number;
  /** The exit code or signal once the process ended, else `null`. */
  readonly exit: string | null;
  /** Everything the process wrote to stderr so far. */
  readonly stderr: string;
  /** Sends `/ping` and checks the answer: the process is up and serving. */
  expectAlive(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Forks `fixtures/<name>.ts` (run through tsx); the fixture listens on 127.0.0.1 port 0 and
 * sends `{ port }` over IPC. Node's defaults apply in the child: an uncaught exception or an
 * unhandled rejection ends it.
 */
export function spawnServer(
  name: string,
  env: Record<string, string> = {},
): Promise<ServerProcess> {
  const file = fileURLToPath(new URL(`./fixtures/${name}.ts`, import.meta.url));
  const child: ChildProcess = fork(file, [], {
    execArgv: ['--import', tsx],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  let exit: string | null = null;
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exit = String(code ?? signal);
      resolve();
    });
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    void exited.then(() => reject(new Error(`fixture ${name} exited early:\n${stderr}`)));
    child.once('message', (msg: { port: number }) => {
      const server: ServerProcess = {
        port: msg.port,
        get exit() {
          return exit;
        },
        get stderr() {
          return stderr;
        },
        async expectAlive() {
          const res = await raw(msg.port, { path: '/ping' }).catch((err: Error) => {
            throw new Error(`the server process is gone (exit ${exit}): ${err.message}\n${stderr}`);
          });
          expect(res.status).toBe(200);
          expect(res.body).toBe('pong');
          expect(exit).toBeNull();
        },
        async stop() {
          if (exit !== null) return;
          child.kill();
          await exited;
        },
      };
      resolve(server);
    });
  });
}

/**
 * For in-process tests: fails the test if an uncaught exception or unhandled rejection happened
 * while it ran (vitest would report it, but not against the test that caused it).
 */
export function guardProcess(): void {
  const seen: unknown[] = [];
  const onError = (err: unknown): void => {
    seen.push(err);
  };
  beforeEach(() => {
    seen.length = 0;
    process.on('uncaughtException', onError);
    process.on('unhandledRejection', onError);
  });
  afterEach(async () => {
    // Rejections are reported after the microtask queue drains.
    await new Promise((r) => setImmediate(r));
    process.off('uncaughtException', onError);
    process.off('unhandledRejection', onError);
    expect(seen).toEqual([]);
  });
}

/**
 * Runs `work` while a 5 ms interval watches the event loop; returns the longest gap between two
 * ticks (ms). A handler that blocks the loop shows as a long gap, the way a ping route would
 * answer late. Callers compare it with a generous bound, never a tight one.
 */
export async function longestStall(work: () => Promise<unknown>): Promise<number> {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 5);
  try {
    await work();
    // One more tick so a stall at the very end is measured too.
    await new Promise((r) => setTimeout(r, 10));
  } finally {
    clearInterval(timer);
  }
  return Math.max(longest, performance.now() - last);
}

/** Rejects when `work` has not settled in `ms`: for "never answers" faults (generous bound). */
export function within<T>(work: Promise<T>, ms = 4_000, what = 'the work'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not finish in ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * A raw TCP conversation: `send(bytes)` writes, `until(text)` waits (bounded) for the text to
 * appear in what the server sent so far; `received` holds it all.
 */
export async function rawSocket(port: number): Promise<{
  send(bytes: string | Buffer): void;
  until(text: string, ms?: number): Promise<string>;
  readonly received: string;
  readonly closed: boolean;
  end(): void;
}> {
  const { connect } = await import('node:net');
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let received = '';
  let closed = false;
  const waiters = new Set<() => void>();
  const wake = (): void => {
    for (const w of waiters) w();
  };
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    received += chunk;
    wake();
  });
  socket.on('error', () => {});
  socket.on('close', () => {
    closed = true;
    wake();
  });
  return {
    send: (bytes) => socket.write(bytes),
    until(text, ms = 4_000) {
      const found = new Promise<string>((resolve, reject) => {
        const check = (): void => {
          if (received.includes(text)) {
            waiters.delete(check);
            resolve(received);
          } else if (closed) {
            waiters.delete(check);
            reject(new Error(`socket closed before ${JSON.stringify(text)}; got ${received}`));
          }
        };
        waiters.add(check);
        check();
      });
      return within(found, ms, `waiting for ${JSON.stringify(text)}`);
    },
    get received() {
      return received;
    },
    get closed() {
      return closed;
    },
    end: () => socket.destroy(),
  };
}
