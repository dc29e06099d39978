import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readSync,
  realpathSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { appStats } from '../src/app';
import { type App, createApp } from '../src/index';
import { raw, socketBytes, start, until } from './helpers';

let dir: string;
let root: string;
let app: App;
let port: number;
const text = 'Hello, file world!\n0123456789abcdefghij';
const big = Buffer.alloc(200 * 1024);
for (let i = 0; i < big.length; i++) big[i] = i % 251;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keel-files-'));
  root = join(dir, 'public');
  mkdirSync(join(root, 'sub'), { recursive: true });
  writeFileSync(join(root, 'a.txt'), text);
  writeFileSync(join(root, 'sub', 'data.json'), '{"x":1}');
  writeFileSync(join(root, 'blob.unknownext'), 'bin');
  writeFileSync(join(root, 'empty.txt'), '');
  writeFileSync(join(root, '%2e%2e%2fsecret.txt'), 'literal name');
  writeFileSync(join(root, 'big.bin'), big);
  writeFileSync(join(dir, 'secret.txt'), 'TOP SECRET');
  mkdirSync(join(dir, 'public2'));
  writeFileSync(join(dir, 'public2', 'sibling.txt'), 'TOP SECRET sibling');
  symlinkSync(join(dir, 'secret.txt'), join(root, 'link-out.txt'));
  symlinkSync(join(root, 'a.txt'), join(root, 'link-in.txt'));
  symlinkSync(dir, join(root, 'dir-out'));
  app = createApp();
  app.onError(() => {});
  app.get('/files/*', (ctx) => ctx.sendFile(ctx.params['*'] ?? '', { root }));
  app.get('/abs', (ctx) => ctx.sendFile(join(root, 'a.txt')));
  // A path the app built itself, with what the request added after the file name.
  app.get('/abs-tail/:tail', (ctx) => ctx.sendFile(`${join(root, 'a.txt')}${ctx.params.tail}`));
  // The spec's other reading of `root`: the path already resolved, and it must stay inside.
  app.get('/joined/:name', (ctx) => ctx.sendFile(join(root, ctx.params.name ?? ''), { root }));
  app.get('/teapot', (ctx) => ctx.status(418).sendFile('a.txt', { root }));
  app.get('/status/:code', (ctx) =>
    ctx.status(Number(ctx.params.code)).sendFile('a.txt', { root }),
  );
  app.get('/forgot-await', (ctx) => {
    void ctx.sendFile('missing.txt', { root });
  });
  ({ port } = await start(app));
});

afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

const get = (path: string, headers?: Record<string, string>) => raw(port, { path, headers });

describe('sendFile basics', () => {
  it('serves with Content-Type, ETag, Last-Modified, Accept-Ranges', async () => {
    const res = await get('/files/a.txt');
    expect(res.status).toBe(200);
    expect(res.body).toBe(text);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['content-length']).toBe(String(text.length));
    expect(res.headers.etag).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
    expect(new Date(res.headers['last-modified']!).getTime()).not.toBeNaN();
    expect(res.headers['accept-ranges']).toBe('bytes');
    expect(res.headers['x-request-id']).toBeTruthy();
    expect((await get('/files/sub/data.json')).headers['content-type']).toBe(
      'application/json; charset=utf-8',
    );
    expect((await get('/files/blob.unknownext')).headers['content-type']).toBe(
      'application/octet-stream',
    );
    expect((await get('/files/empty.txt')).body).toBe('');
    expect((await get('/abs')).body).toBe(text);
    const teapot = await get('/teapot', { range: 'bytes=0-1' });
    expect(teapot.status).toBe(418);
    expect(teapot.body).toBe(text);
  });

  it('streams large files whole and in ranges', async () => {
    const whole = await get('/files/big.bin');
    expect(whole.raw.equals(big)).toBe(true);
    const window = await get('/files/big.bin', { range: 'bytes=1000-150999' });
    expect(window.status).toBe(206);
    expect(window.raw.equals(big.subarray(1000, 151000))).toBe(true);
    expect(window.headers['content-range']).toBe(`bytes 1000-150999/${big.length}`);
  });

  it('answers HEAD without a body', async () => {
    const res = await raw(port, { method: 'HEAD', path: '/files/a.txt' });
    expect(res.status).toBe(200);
    expect(res.body).toBe('');
    expect(res.headers['content-length']).toBe(String(text.length));
  });

  it('404s missing files and directories, also when the handler did not await', async () => {
    expect((await get('/files/nope.txt')).status).toBe(404);
    expect((await get('/files/sub')).status).toBe(404);
    expect((await get('/files/sub/')).status).toBe(404);
    expect((await get('/forgot-await')).status).toBe(404);
  });

  it('404s a file named as a directory: a trailing / or /. after a file name', async () => {
    // The OS refuses `open("a.txt/.")` (ENOTDIR); normalizing the path first dropped the `/.`
    // and served a.txt under a URL that names a directory.
    for (const path of [
      '/files/a.txt/',
      '/files/a.txt/.',
      '/files/a.txt/./',
      '/files/a.txt%2f.',
      '/files/a.txt%2f',
      '/files/sub/data.json/.',
      '/files/link-in.txt/.',
      '/joined/a.txt%2f',
      '/abs-tail/%2f.',
      '/abs-tail/%2f',
      '/abs-tail/%2f.%2f',
    ]) {
      const res = await get(path);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.body).not.toContain(text);
    }
    // A `.` segment before the name still names the file.
    expect((await get('/files/./a.txt')).body).toBe(text);
    expect((await get('/files/sub/./data.json')).body).toBe('{"x":1}');
  });
});

describe('bodiless statuses', () => {
  it('204, 205 and 304 set with ctx.status() send no file bytes and no file length', async () => {
    // One keep-alive socket: a body byte or a length left over would be read as the start of
    // the next response.
    const request = (path: string, last = false) =>
      `GET ${path} HTTP/1.1\r\nHost: x\r\n${last ? 'Connection: close\r\n' : ''}\r\n`;
    const out = await socketBytes(
      port,
      request('/status/204') +
        request('/status/205') +
        request('/status/304') +
        request('/files/sub/data.json', true),
      2000,
    );
    const starts = [...out.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m.index);
    expect(starts).toHaveLength(4);
    const responses = starts.map((at, i) => out.slice(at, starts[i + 1] ?? out.length));
    const [r204, r205, r304, last] = responses as [string, string, string, string];
    for (const [res, status] of [
      [r204, 204],
      [r205, 205],
      [r304, 304],
    ] as const) {
      const [head, body] = res.split('\r\n\r\n') as [string, string];
      expect(head.startsWith(`HTTP/1.1 ${status} `), res).toBe(true);
      expect(body, `${status} body`).toBe('');
      expect(head).not.toMatch(/\r\ntransfer-encoding:/i);
      // RFC 9110 §8.6: no Content-Length in a 204; in a 304 only the 200's, which a client
      // would not expect here. A 205 says "no content" as `ctx.status(205).send()` does: 0.
      const length = /\r\ncontent-length: (\d+)/i.exec(head)?.[1];
      expect(length, `${status} content-length`).toBe(status === 205 ? '0' : undefined);
    }
    // A 304 keeps the validators a cache revalidates with.
    expect(r304).toMatch(/\r\netag: "/i);
    expect(r304).toMatch(/\r\nlast-modified: /i);
    expect(last.startsWith('HTTP/1.1 200 ')).toBe(true);
    expect(last.endsWith('{"x":1}')).toBe(true);
  });
});

describe('conditional requests', () => {
  it('304 for a matching If-None-Match, and If-Modified-Since', async () => {
    const first = await get('/files/a.txt');
    const etag = first.headers.etag!;
    const nm = await get('/files/a.txt', { 'if-none-match': etag });
    expect(nm.status).toBe(304);
    expect(nm.body).toBe('');
    expect(nm.headers.etag).toBe(etag);
    expect((await get('/files/a.txt', { 'if-none-match': `"other", ${etag}` })).status).toBe(304);
    expect((await get('/files/a.txt', { 'if-none-match': '*' })).status).toBe(304);
    expect((await get('/files/a.txt', { 'if-none-match': '"other"' })).status).toBe(200);
    const lm = first.headers['last-modified']!;
    expect((await get('/files/a.txt', { 'if-modified-since': lm })).status).toBe(304);
    const past = new Date(Date.parse(lm) - 60_000).toUTCString();
    expect((await get('/files/a.txt', { 'if-modified-since': past })).status).toBe(200);
    expect((await get('/files/a.txt', { 'if-modified-since': 'garbage' })).status).toBe(200);
    // If-None-Match wins over If-Modified-Since.
    expect(
      (await get('/files/a.txt', { 'if-none-match': '"x"', 'if-modified-since': lm })).status,
    ).toBe(200);
    // no-cache asks for validation, which this is (fetch sends it with every validator).
    expect(
      (await get('/files/a.txt', { 'if-none-match': etag, 'cache-control': 'no-cache' })).status,
    ).toBe(304);
  });
});

describe('ranges', () => {
  const size = text.length;
  it('serves a single range with 206 and Content-Range', async () => {
    const res = await get('/files/a.txt', { range: 'bytes=0-4' });
    expect(res.status).toBe(206);
    expect(res.body).toBe('Hello');
    expect(res.headers['content-range']).toBe(`bytes 0-4/${size}`);
    expect(res.headers['content-length']).toBe('5');
  });

  it('handles suffix, open-ended and past-EOF ranges', async () => {
    const suffix = await get('/files/a.txt', { range: 'bytes=-5' });
    expect(suffix.status).toBe(206);
    expect(suffix.body).toBe('fghij');
    const open = await get('/files/a.txt', { range: 'bytes=20-' });
    expect(open.body).toBe(text.slice(20));
    expect(open.headers['content-range']).toBe(`bytes 20-${size - 1}/${size}`);
    const clamped = await get('/files/a.txt', { range: 'bytes=30-99999' });
    expect(clamped.status).toBe(206);
    expect(clamped.body).toBe(text.slice(30));
    const hugeSuffix = await get('/files/a.txt', { range: 'bytes=-99999' });
    expect(hugeSuffix.body).toBe(text);
  });

  it('416 with bytes */size when unsatisfiable', async () => {
    // An inverted range (5-2) is invalid and, like range-parser and `send`, answered with 416.
    for (const range of ['bytes=9999-', 'bytes=9999-10000', 'bytes=5-2', 'bytes=-0']) {
      const res = await get('/files/a.txt', { range });
      expect(res.status).toBe(416);
      expect(res.headers['content-range']).toBe(`bytes */${size}`);
      expect(res.body).toBe('');
    }
    expect((await get('/files/empty.txt', { range: 'bytes=0-' })).status).toBe(416);
    expect((await get('/files/empty.txt', { range: 'bytes=-0' })).status).toBe(416);
  });

  it('a suffix range on an empty file gets the empty file with 200', async () => {
    // RFC 9110 §14.1.1: a suffix-range with a non-zero length is satisfiable even for an empty
    // representation, yet no 206 can describe a window of it: the Range is ignored.
    for (const range of ['bytes=-1', 'bytes=-500', 'bytes=0-,-5', 'bytes=-5, 3-4']) {
      const res = await get('/files/empty.txt', { range });
      expect(res.status, range).toBe(200);
      expect(res.body).toBe('');
      expect(res.headers['content-length']).toBe('0');
      expect(res.headers['content-range']).toBeUndefined();
    }
  });

  it('takes the range unit in any case (RFC 9110 §14.1: range unit names are case-insensitive)', async () => {
    for (const range of ['BYTES=0-4', 'Bytes=0-4']) {
      const res = await get('/files/a.txt', { range });
      expect(res.status, range).toBe(206);
      expect(res.body).toBe('Hello');
      expect(res.headers['content-range']).toBe(`bytes 0-4/${size}`);
    }
  });

  it('a Range in a unit it does not know is ignored, also when it would not fit (never 416)', async () => {
    // RFC 9110 §14.2: a Range with an unknown unit is ignored. range-parser calls `items=99-`
    // unsatisfiable whatever the unit, which was answered 416 with `Content-Range: bytes */..`.
    for (const range of ['items=99-', 'pages=5-1', 'bytes =0-1', 'x=-0']) {
      const res = await get('/files/a.txt', { range });
      expect(res.status, range).toBe(200);
      expect(res.body).toBe(text);
      expect(res.headers['content-range']).toBeUndefined();
    }
  });

  it('ignores malformed ranges and serves the whole file', async () => {
    for (const range of ['bytes=abc', 'items=0-1', 'bytes=1-x', 'bytes', '']) {
      const res = await get('/files/a.txt', { range });
      expect(res.status, range).toBe(200);
      expect(res.body).toBe(text);
    }
  });

  it('never amplifies: overlaps are combined, many ranges get the file once', async () => {
    const overlap = await get('/files/a.txt', { range: 'bytes=0-10,5-15,0-15' });
    expect(overlap.status).toBe(206);
    expect(overlap.body).toBe(text.slice(0, 16));
    const disjoint = await get('/files/a.txt', { range: 'bytes=0-1,10-11' });
    expect(disjoint.status).toBe(200);
    expect(disjoint.body).toBe(text);
    const many = Array.from({ length: 1000 }, (_, i) => `${i % size}-${i % size}`).join(',');
    const res = await get('/files/a.txt', { range: `bytes=${many}` });
    expect(res.status).toBe(200);
    expect(res.raw.length).toBe(size);
    const manyBig = Array.from({ length: 1000 }, () => '0-').join(',');
    const bigRes = await get('/files/big.bin', { range: `bytes=${manyBig}` });
    expect(bigRes.raw.length).toBe(big.length);
  });

  it('reads only the requested window from disk', async () => {
    const probe = await open(join(root, 'a.txt'));
    const proto = Object.getPrototypeOf(probe) as {
      read: (...args: unknown[]) => unknown;
      createReadStream: (...args: unknown[]) => unknown;
    };
    await probe.close();
    const read = vi.spyOn(proto, 'read');
    const stream = vi.spyOn(proto, 'createReadStream');
    try {
      await get('/files/a.txt', { range: 'bytes=3-7' });
      expect(read).toHaveBeenCalledTimes(1);
      expect(read.mock.calls[0]?.slice(1)).toEqual([0, 5, 3]); // offset, length, position
      await get('/files/big.bin', { range: 'bytes=100000-199999' });
      expect(stream).toHaveBeenCalledTimes(1);
      expect(stream.mock.calls[0]?.[0]).toMatchObject({ start: 100000, end: 199999 });
    } finally {
      read.mockRestore();
      stream.mockRestore();
    }
  });

  it('answers 500 (and onResponse says so) for a small file that shrank after its stat', async () => {
    // The stat promised bytes no read finds: the 200 head went out before the abort, and the
    // response was reported a 200 though no byte of it was sent.
    const file = join(root, 'shrinks.txt');
    writeFileSync(file, 'x'.repeat(1000));
    const probe = await open(file);
    const proto = Object.getPrototypeOf(probe) as {
      stat: (...args: unknown[]) => Promise<unknown>;
    };
    await probe.close();
    const realStat = proto.stat;
    // The real stat, then the real file cut short: the window between the two, made certain.
    const stat = vi.spyOn(proto, 'stat').mockImplementation(async function (
      this: unknown,
      ...args: unknown[]
    ) {
      const st = await realStat.apply(this, args);
      truncateSync(file, 10);
      return st;
    });
    const a = createApp();
    a.onError(() => {});
    const statuses: number[] = [];
    a.onResponse((_ctx, info) => {
      statuses.push(info.status);
    });
    a.get('/shrinks', (ctx) => ctx.sendFile('shrinks.txt', { root }));
    try {
      const { port: p } = await start(a);
      const res = await raw(p, { path: '/shrinks' });
      expect(res.status).toBe(500);
      expect(statuses).toEqual([500]);
    } finally {
      stat.mockRestore();
      await a.close();
    }
  });

  it('the error for a file that shrank names the window it was to send and what was read', async () => {
    // It quoted the file's size: for a range, not the bytes that were missing.
    const file = join(root, 'shrinks-range.txt');
    writeFileSync(file, 'x'.repeat(1000));
    const probe = await open(file);
    const proto = Object.getPrototypeOf(probe) as {
      stat: (...args: unknown[]) => Promise<unknown>;
    };
    await probe.close();
    const realStat = proto.stat;
    const stat = vi.spyOn(proto, 'stat').mockImplementation(async function (
      this: unknown,
      ...args: unknown[]
    ) {
      const st = await realStat.apply(this, args);
      truncateSync(file, 150);
      return st;
    });
    const a = createApp();
    const errors: Error[] = [];
    a.onError((err) => {
      errors.push(err as Error);
    });
    a.get('/shrinks', (ctx) => ctx.sendFile('shrinks-range.txt', { root }));
    try {
      const { port: p } = await start(a);
      const res = await raw(p, { path: '/shrinks', headers: { range: 'bytes=100-199' } });
      expect(res.status).toBe(500);
      expect(errors.map((e) => e.message)).toEqual([
        `keel: sendFile: ${realpathSync(file)} shrank while it was read: expected bytes 100-199 ` +
          '(100 bytes) of the 1000 its stat gave, read 50',
      ]);
    } finally {
      stat.mockRestore();
      await a.close();
    }
  });

  it('a large file that shrank while it was streamed is reported, with what was expected and read', async () => {
    // The connection was ended (the client must not read the next response as the rest of the
    // body), but nothing told the app why: the error reaches onError now.
    const file = join(root, 'shrinks-big.bin');
    writeFileSync(file, Buffer.alloc(100_000, 97));
    const probe = await open(file);
    const proto = Object.getPrototypeOf(probe) as {
      stat: (...args: unknown[]) => Promise<unknown>;
    };
    await probe.close();
    const realStat = proto.stat;
    const stat = vi.spyOn(proto, 'stat').mockImplementation(async function (
      this: unknown,
      ...args: unknown[]
    ) {
      const st = await realStat.apply(this, args);
      truncateSync(file, 70_000);
      return st;
    });
    const a = createApp();
    const errors: Error[] = [];
    a.onError((err) => {
      errors.push(err as Error);
    });
    a.get('/shrinks', (ctx) => ctx.sendFile('shrinks-big.bin', { root }));
    try {
      const { port: p } = await start(a);
      const res = await raw(p, { path: '/shrinks', headers: { range: 'bytes=1000-89999' } }).catch(
        (err: Error) => err,
      );
      // The head promised 89000 bytes: the client sees the connection end short of them.
      expect(res).toBeInstanceOf(Error);
      // Told once the file stream closed, which may come after the client saw the end.
      await until(() => appStats(a).inflight === 0);
      expect(errors.map((e) => e.message)).toEqual([
        `keel: sendFile: ${realpathSync(file)} shrank while it was read: expected bytes 1000-89999 ` +
          '(89000 bytes) of the 100000 its stat gave, read 69000',
      ]);
    } finally {
      stat.mockRestore();
      await a.close();
    }
  });

  // A read may return fewer bytes than asked without the file ending (FUSE and network
  // filesystems, sysfs): a sysfs file hands out at most a page per read.
  const sysfs = '/sys/kernel/btf/vmlinux';
  it.skipIf(!existsSync(sysfs))(
    'sends a range whole from a file whose reads are short',
    async () => {
      const fd = openSync(sysfs, 'r');
      const want = Buffer.alloc(20_000);
      let got = 0;
      try {
        // The premise: one read of the window returns part of it.
        expect(readSync(fd, want, 0, want.length, 100)).toBeLessThan(want.length);
        while (got < want.length) got += readSync(fd, want, got, want.length - got, 100 + got);
      } finally {
        closeSync(fd);
      }
      const a = createApp();
      a.get('/btf', (ctx) => ctx.sendFile('vmlinux', { root: '/sys/kernel/btf' }));
      try {
        const { port: p } = await start(a);
        const res = await raw(p, { path: '/btf', headers: { range: 'bytes=100-20099' } });
        expect(res.status).toBe(206);
        expect(res.raw.equals(want)).toBe(true);
      } finally {
        await a.close();
      }
    },
  );

  it('honours If-Range', async () => {
    const etag = (await get('/files/a.txt')).headers.etag!;
    expect((await get('/files/a.txt', { range: 'bytes=0-1', 'if-range': etag })).status).toBe(206);
    const stale = await get('/files/a.txt', { range: 'bytes=0-1', 'if-range': '"stale"' });
    expect(stale.status).toBe(200);
    expect(stale.body).toBe(text);
  });
});

describe('root confinement', () => {
  const attempts: [string, number[]][] = [
    ['/files/../secret.txt', [403]],
    ['/files/sub/../../secret.txt', [403]],
    ['/files/%2e%2e/secret.txt', [403]],
    ['/files/%2e%2e%2fsecret.txt', [403]],
    ['/files/..%2fsecret.txt', [403]],
    ['/files/..%5csecret.txt', [403]],
    ['/files/%2E%2E%2Fsecret.txt', [403]],
    ['/files/%252e%252e%252fsecret.txt', [200]], // decoded once: the literal file inside root
    ['/files/%252e%252e%252fsecret2.txt', [404]],
    ['/files/a.txt%00.png', [404]],
    ['/files/%00', [404]],
    ['/files/link-out.txt', [403]],
    ['/files/dir-out/secret.txt', [403]],
    ['/files//etc/passwd', [404]],
    ['/files/%2fetc%2fpasswd', [404]],
  ];
  for (const [path, statuses] of attempts) {
    it(`refuses ${path}`, async () => {
      const res = await get(path);
      expect(statuses).toContain(res.status);
      expect(res.body).not.toContain('TOP SECRET');
      expect(res.body).not.toContain('root:');
    });
  }

  it('an absolute path inside the root is served; one resolved out of it never is', async () => {
    expect((await get('/joined/a.txt')).body).toBe(text);
    expect((await get('/joined/sub%2fdata.json')).body).toBe('{"x":1}');
    for (const path of [
      '/joined/..%2fsecret.txt',
      '/joined/..%2fpublic2%2fsibling.txt', // a sibling sharing the root's name as a prefix
      '/joined/..%2f..%2f..%2f..%2f..%2fetc%2fpasswd',
      '/joined/.env',
    ]) {
      const res = await get(path);
      expect([403, 404]).toContain(res.status);
      expect(res.body).not.toContain('TOP SECRET');
      expect(res.body).not.toContain('root:');
    }
  });

  it('follows symlinks that stay inside the root', async () => {
    expect((await get('/files/link-in.txt')).body).toBe(text);
    expect((await get('/files/%252e%252e%252fsecret.txt')).body).toBe('literal name');
  });
});
