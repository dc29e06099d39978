// `sendFile(name, { root })` checked the real path was inside the root, then opened the path:
// a directory on it swapped for a symlink between the two (O_NOFOLLOW guards only the last
// component) served a file from outside the root. The swap is made deterministic by running it
// from inside the module's own `open` call (the real fs underneath, only wrapped): no timing luck.
import {
  mkdirSync,
  mkdtempSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import type * as FsPromises from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { type App, createApp } from '../../src/index';
import { raw, start } from '../helpers';
import { guardProcess } from './harness';

/** Test hooks around the real fs calls the module makes. */
const hooks = vi.hoisted(() => ({
  beforeOpen: null as (() => void) | null,
  afterOpen: null as (() => void) | null,
  /** Simulates a platform without /proc (macOS, Windows): the fd's path cannot be read. */
  noProcfs: false,
}));

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof FsPromises>();
  const open: typeof real.open = async (...args) => {
    hooks.beforeOpen?.();
    const handle = await real.open(...args);
    hooks.afterOpen?.();
    return handle;
  };
  const readlink = (async (path: string, ...rest: unknown[]) => {
    if (hooks.noProcfs && String(path).startsWith('/proc/')) {
      throw Object.assign(new Error(`ENOENT: no such file or directory, readlink '${path}'`), {
        code: 'ENOENT',
      });
    }
    return (real.readlink as (...a: unknown[]) => Promise<string>)(path, ...rest);
  }) as typeof real.readlink;
  return { ...real, default: { ...real, open, readlink }, open, readlink };
});

guardProcess();

let dir: string;
let root: string;
let app: App;
let port: number;
const errors: unknown[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keel-toctou-'));
  root = join(dir, 'root');
  mkdirSync(join(root, 'sub'), { recursive: true });
  mkdirSync(join(root, '.git'));
  mkdirSync(join(dir, 'secret'));
  writeFileSync(join(root, 'sub', 'a.txt'), 'public');
  writeFileSync(join(root, '.git', 'a.txt'), 'GITSECRET');
  writeFileSync(join(dir, 'secret', 'a.txt'), 'SECRET');
  app = createApp();
  app.onError((err) => {
    errors.push(err);
  });
  app.get('/*', (ctx) => ctx.sendFile(ctx.params['*'] ?? '', { root }));
  ({ port } = await start(app));
});

afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  errors.length = 0;
});

afterEach(() => {
  hooks.beforeOpen = null;
  hooks.afterOpen = null;
  hooks.noProcfs = false;
  // Back to the real directory whatever the test left.
  restore();
});

/** `root/sub` becomes a symlink to `target` (the real directory kept aside). */
function swapSub(target: string): void {
  renameSync(join(root, 'sub'), join(root, 'sub-real'));
  symlinkSync(target, join(root, 'sub'));
}

function restore(): void {
  try {
    readlinkSync(join(root, 'sub'));
  } catch {
    return; // a directory, not a link: nothing swapped
  }
  rmSync(join(root, 'sub'));
  renameSync(join(root, 'sub-real'), join(root, 'sub'));
}

describe('a directory swapped for a symlink between the root check and the open', () => {
  it('serves the file when nothing is swapped', async () => {
    const res = await raw(port, { path: '/sub/a.txt' });
    expect(res.status).toBe(200);
    expect(res.body).toBe('public');
  });

  for (const procfs of [true, false]) {
    const where = procfs ? 'with /proc' : 'without /proc';

    it(`refuses a file outside the root (403), ${where}`, async () => {
      hooks.noProcfs = !procfs;
      hooks.beforeOpen = () => swapSub(join(dir, 'secret'));
      const res = await raw(port, { path: '/sub/a.txt' });
      expect(res.body).not.toContain('SECRET');
      expect(res.status).toBe(403);
    });

    it(`refuses it when the link is swapped back right after the open, ${where}`, async () => {
      hooks.noProcfs = !procfs;
      hooks.beforeOpen = () => swapSub(join(dir, 'secret'));
      hooks.afterOpen = restore;
      const res = await raw(port, { path: '/sub/a.txt' });
      expect(res.body).not.toContain('SECRET');
      expect([403, 404]).toContain(res.status);
    });

    it(`refuses a dotfile directory inside the root as dotfiles says (404), ${where}`, async () => {
      hooks.noProcfs = !procfs;
      hooks.beforeOpen = () => swapSub(join(root, '.git'));
      const res = await raw(port, { path: '/sub/a.txt' });
      expect(res.body).not.toContain('GITSECRET');
      expect(res.status).toBe(404);
    });
  }

  for (const procfs of [true, false]) {
    it(`still serves a file the swap leaves inside the root, ${procfs ? 'with' : 'without'} /proc`, async () => {
      hooks.noProcfs = !procfs;
      mkdirSync(join(root, 'other'), { recursive: true });
      writeFileSync(join(root, 'other', 'a.txt'), 'other');
      hooks.beforeOpen = () => swapSub(join(root, 'other'));
      const res = await raw(port, { path: '/sub/a.txt' });
      expect(res.status).toBe(200);
      expect(res.body).toBe('other');
    });
  }
});
