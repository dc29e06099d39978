import { constants, type Stats } from 'node:fs';
import { type FileHandle, open, readlink, realpath, stat as statPath } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import mime from 'mime-types';
import parseRange from 'range-parser';
import { endBodiless, isBodiless } from './bodiless';
import { checkOptions, keysOf, oneOf, rangeError, typeError } from './checks';
import { HttpException } from './errors';
import { parseHttpDate } from './http-date';
import { fitsQueue, QUEUED_STREAM_BYTES, watchEnded, watchSend, whenDone } from './send-watch';
import type { StreamTarget } from './stream-body';

/** Options for `ctx.sendFile`. */
export interface SendFileOptions {
  /**
   * Directory the file must stay inside. `path` is then taken relative to it (an absolute path
   * already inside it, e.g. `join(root, name)`, is that file); `..` segments are
   * refused (403), and the real path (symlinks resolved) must be inside the real root (403).
   * Always set it when any part of the path comes from the request. An empty string (an unset
   * env var) is a RangeError, not the working directory.
   *
   * @default undefined (the path is used as given: only for paths the app chose itself)
   */
  root?: string | undefined;
  /**
   * Files and folders whose name starts with a dot (`.env`, `.git/`), checked on the path below
   * `root` as requested and as resolved (a symlink to `.git` counts): `'ignore'` answers 404 as
   * if they did not exist, `'deny'` 403, `'allow'` serves them. Only with `root`: a path chosen
   * by the app itself is served as given.
   *
   * @default 'ignore'
   */
  dotfiles?: 'ignore' | 'deny' | 'allow' | undefined;
}

/** What `sendFile` needs from the request and response. */
export interface FileTarget extends StreamTarget {
  /** The request's headers: conditionals and ranges (which apply only to status 200). */
  headers: IncomingHttpHeaders;
}

/** Ranges beyond this count are not parsed: the whole file is sent once instead. */
export const MAX_RANGES = 16;
/** Windows up to this size are read in one `read` call and sent with `end`. */
const SMALL_FILE = 64 * 1024;
// O_NONBLOCK: if a FIFO replaces the file between the stat and the open, the open still returns
// at once (a blocking open would park a libuv worker until a writer appears); the fstat after it
// then refuses the FIFO. It changes nothing for regular files.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
const DOTFILES = ['ignore', 'deny', 'allow'] as const;
const BYTES_UNIT = /^bytes=/i;

function fsError(err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR' || code === 'ENAMETOOLONG') {
    return new HttpException(404);
  }
  if (code === 'EACCES' || code === 'EPERM' || code === 'ELOOP') return new HttpException(403);
  return err;
}

function inside(root: string, path: string): boolean {
  return path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** True when a segment of `path` (split on either separator) starts with a dot. */
function hasDotSegment(path: string): boolean {
  for (const segment of path.split(/[\\/]/)) {
    if (segment.length > 0 && segment.charCodeAt(0) === 46) return true;
  }
  return false;
}

/**
 * True when the path ends in a separator or a `.` segment: it names a directory, never a file.
 * join / resolve / realpath drop that tail (`a.txt/.` becomes `a.txt`), so the file would be
 * served under a directory's name, where `open` itself answers ENOTDIR.
 */
function namesDirectory(path: string): boolean {
  const last = path.charCodeAt(path.length - 1);
  if (last === 47 || last === 92) return true; // '/' or '\\'
  if (last !== 46) return false;
  const before = path.length === 1 ? 47 : path.charCodeAt(path.length - 2);
  return before === 47 || before === 92;
}

/**
 * The part of `path` below the root. An absolute path already inside the root (as given or as
 * its real path), e.g. `join(root, name)`, is taken as that file; any other path, absolute ones
 * included, is relative to the root (joined under it, so it cannot leave it).
 */
function belowRoot(path: string, root: string, base: string): string {
  if (!isAbsolute(path)) return path;
  for (const dir of [resolve(root), base]) {
    if (inside(dir, path)) return relative(dir, path);
  }
  return path;
}

/** A file to serve: its real path, and the real root it must stay inside (none without `root`). */
interface Resolved {
  file: string;
  base: string | undefined;
}

/** A real path must be inside the real root, and a dotfile there is refused as `dotfiles` says. */
function checkReal(base: string, real: string, dotfiles: 'ignore' | 'deny' | 'allow'): void {
  if (!inside(base, real)) throw new HttpException(403);
  if (dotfiles !== 'allow' && hasDotSegment(relative(base, real))) {
    throw new HttpException(dotfiles === 'deny' ? 403 : 404);
  }
}

/**
 * Canonicalizes once: the path is used as given (the router already decoded the URL once, so a
 * double-encoded `%252e` stays a literal file name), joined to the real root, and checked twice:
 * lexically before touching the disk, and again on the real path so a symlink cannot escape.
 * Dotfiles are checked on both too. The file opened is checked again (see checkOpened).
 */
export async function resolveFile(
  path: string,
  root: string | undefined,
  dotfiles: 'ignore' | 'deny' | 'allow' = 'ignore',
): Promise<Resolved> {
  if (typeof path !== 'string' || path === '' || path.includes('\0')) throw new HttpException(404);
  if (root === undefined) {
    if (namesDirectory(path)) throw new HttpException(404);
    return { file: resolve(path), base: undefined };
  }
  if (path.split(/[\\/]/).includes('..')) throw new HttpException(403);
  // Resolved per request, not cached: a root that is a symlink (`current` -> `release-2`, as
  // deploys swap it) serves what it points to now, not what it pointed to at the first request.
  const base = await realpath(resolve(root));
  const joined = join(base, belowRoot(path, root, base));
  // The root itself is a directory: no file to serve.
  if (joined === base) throw new HttpException(404);
  // Checked on the normalized path: `./a.txt` has a `.` segment (the current directory) but names
  // no dotfile, as send / serve-static see it.
  checkReal(base, joined, dotfiles);
  // After the dotfile check: `.env/.` is refused as `.env` is (403 under 'deny').
  if (namesDirectory(path)) throw new HttpException(404);
  let real: string;
  try {
    real = await realpath(joined);
  } catch (err) {
    throw fsError(err);
  }
  checkReal(base, real, dotfiles);
  return { file: real, base };
}

/**
 * The file opened must be the one checked inside the root: a directory on its path swapped for
 * a symlink between the check and the open (O_NOFOLLOW guards only the last component) would
 * lead the open elsewhere. Linux names the opened file itself (/proc/self/fd); elsewhere the
 * real path as it is now is checked and must lead to the very file opened (device and inode).
 */
async function checkOpened(
  handle: FileHandle,
  opened: Stats,
  file: string,
  base: string,
  dotfiles: 'ignore' | 'deny' | 'allow',
): Promise<void> {
  let real: string | null = null;
  try {
    real = await readlink(`/proc/self/fd/${handle.fd}`);
  } catch {
    // No procfs: checked by path below.
  }
  if (real === null || !isAbsolute(real)) {
    let now: Stats;
    try {
      real = await realpath(file);
      now = await statPath(real);
    } catch (err) {
      throw fsError(err);
    }
    // Not the file at the checked path: it changed between the open and now, as if gone.
    if (now.dev !== opened.dev || now.ino !== opened.ino) throw new HttpException(404);
  }
  checkReal(base, real, dotfiles);
}

/**
 * RFC 9110 §14.1.2: a suffix longer than the file means the whole file; range-parser 1.x calls
 * it unsatisfiable, so rewrite `-N` (N >= size) to `0-` first.
 */
function clampSuffixes(size: number, header: string): string {
  if (!/[=,]\s*-/.test(header)) return header;
  const eq = header.indexOf('=');
  const parts = header.slice(eq + 1).split(',');
  for (let i = 0; i < parts.length; i++) {
    const m = /^\s*-(\d+)\s*$/.exec(parts[i]!);
    if (m !== null && size > 0 && Number(m[1]) >= size) parts[i] = '0-';
  }
  return `${header.slice(0, eq + 1)}${parts.join(',')}`;
}

/**
 * RFC 9110 §14.1.1: a suffix-range with a non-zero length is satisfiable whatever the size, an
 * empty file's too; range-parser calls every range of an empty file unsatisfiable. No 206 can
 * describe a window of nothing, so the caller ignores the Range and sends the empty file (200),
 * as for any range it does not serve. Only asked for an empty file (rare): not on the hot path.
 */
function hasSuffixRange(header: string): boolean {
  for (const part of header.slice(header.indexOf('=') + 1).split(',')) {
    if (/^\s*-\d*[1-9]\d*\s*$/.test(part)) return true;
  }
  return false;
}

/**
 * Picks the one byte window to send: `null` means send the whole file (no Range, a malformed
 * one, one in another unit, several disjoint ranges, or more than {@link MAX_RANGES} parts), so a response is never
 * larger than the file. Overlapping and adjacent ranges are combined first.
 */
export function pickRange(
  size: number,
  header: string,
): { start: number; end: number } | 'unsatisfiable' | null {
  // RFC 9110 §14.2: a Range in a unit not understood is ignored (range-parser would call one that
  // does not fit unsatisfiable: a 416 in bytes for it). §14.1: unit names are case-insensitive.
  if (!BYTES_UNIT.test(header)) return null;
  let parts = 1;
  for (let i = 0; i < header.length; i++) {
    if (header.charCodeAt(i) === 44 && ++parts > MAX_RANGES) return null;
  }
  const ranges = parseRange(size, clampSuffixes(size, header), { combine: true });
  if (ranges === -1) return size === 0 && hasSuffixRange(header) ? null : 'unsatisfiable';
  if (ranges === -2 || ranges.length !== 1) return null;
  return ranges[0] ?? null;
}

function etagMatches(list: string, etag: string, weak = true): boolean {
  if (list.trim() === '*') return true;
  const compared = (tag: string) => (weak && tag.startsWith('W/') ? tag.slice(2) : tag);
  const bare = compared(etag);
  for (const raw of list.split(',')) if (compared(raw.trim()) === bare) return true;
  return false;
}

/** Last-Modified as HTTP dates carry it: whole seconds. */
function lastModified(mtimeMs: number): number {
  return Math.floor(mtimeMs / 1000) * 1000;
}

/**
 * If-None-Match wins over If-Modified-Since (RFC 9110 §13.2.2). A request's `Cache-Control:
 * no-cache` does not skip the check: it asks caches to validate with the origin (RFC 9111
 * §5.2.1.4), and this is that validation; `fetch` adds it to every request carrying a validator,
 * so honouring it (as `fresh` does) left fetch clients no 304 at all. A date that is no
 * HTTP-date (`9999`, an ISO date, a list) is ignored (§13.1.3): Date.parse would read
 * `9999` as a time no file reaches, a 304 for ever. So is one later than `now` (the app's clock):
 * §13.1.3 calls it invalid; a client would keep a stale copy until that date passed, however
 * often the file changed. The caller asks only for GET and HEAD.
 */
export function isNotModified(
  headers: IncomingHttpHeaders,
  etag: string,
  mtimeMs: number,
  now: number,
): boolean {
  const inm = headers['if-none-match'];
  if (inm !== undefined) return etagMatches(inm, etag);
  const ims = headers['if-modified-since'];
  if (ims === undefined) return false;
  const since = parseHttpDate(ims, now);
  return since !== null && since <= now && lastModified(mtimeMs) <= since;
}

/**
 * RFC 9110 §13.1.1 / §13.1.4: If-Match needs one listed tag to match by strong comparison (or
 * `*`); without it, If-Unmodified-Since fails when the file changed after its date, and is
 * ignored when that is no HTTP-date (Date.parse read `0` as the year 2000: a 412).
 */
export function isPreconditionFailed(
  headers: IncomingHttpHeaders,
  etag: string,
  mtimeMs: number,
  now: number,
): boolean {
  const im = headers['if-match'];
  if (im !== undefined) return !etagMatches(im, etag, false);
  const ius = headers['if-unmodified-since'];
  if (ius === undefined) return false;
  const since = parseHttpDate(ius, now);
  return since !== null && lastModified(mtimeMs) > since;
}

/**
 * RFC 9110 §13.1.5: a range is served only when If-Range holds a strong validator that matches:
 * the entity tag by strong comparison (a weak tag on either side never matches), or a date equal
 * to Last-Modified that is at least a second before now (§8.8.2.2: a file modified within the
 * second may change again with the same date, so that date is only weak). Anything else gets
 * the whole representation.
 */
function ifRangeAllows(
  headers: IncomingHttpHeaders,
  etag: string,
  mtimeMs: number,
  now: number,
): boolean {
  const ifRange = headers['if-range'];
  if (ifRange === undefined) return true;
  if (typeof ifRange !== 'string') return false;
  const value = ifRange.trim();
  if (value.startsWith('"') || value.startsWith('W/')) return value === etag;
  // Only an HTTP-date (§13.1.5): `2024-01-02T03:04:05Z` is no Last-Modified value.
  const date = parseHttpDate(value, now);
  const modified = lastModified(mtimeMs);
  return date !== null && modified === date && modified + 1000 <= now;
}

/**
 * RFC 9110 §8.8.2.1: never later than the server's time (the app's clock); a file modified
 * "in the future" (a skewed file server, an unpacked archive) is sent as modified now. Such a
 * date validates nothing: the file stays newer than it (see isNotModified, ifRangeAllows).
 */
function lastModifiedHeader(mtimeMs: number, now: number): string {
  return new Date(Math.min(mtimeMs, now)).toUTCString();
}

/** Strong, as nginx's: size and mtime in ms change whenever the bytes do, and If-Range accepts only strong validators. */
function etagOf(stat: Stats): string {
  return `"${stat.size.toString(16)}-${Math.floor(stat.mtimeMs).toString(16)}"`;
}

/**
 * The byte window a request asks of a file: `null` for the whole file (no Range, not a GET or
 * HEAD of status 200, an If-Range that does not hold, a Range not served), `'unsatisfiable'`
 * for a 416. Asked of the path's stat to count a queued response, then of the opened file's to
 * send it.
 */
function requestedWindow(
  target: FileTarget,
  stat: Stats,
  etag: string,
): { start: number; end: number } | 'unsatisfiable' | null {
  const { method, headers } = target;
  const range = headers.range;
  if (range === undefined || target.status !== 200 || (method !== 'GET' && method !== 'HEAD')) {
    return null;
  }
  if (!ifRangeAllows(headers, etag, stat.mtimeMs, target.watch.clock.now())) return null;
  return pickRange(stat.size, range);
}

type Window = ReturnType<typeof requestedWindow>;

/**
 * What a file response counts for while it waits behind another, before the file is opened: its
 * first chunk, or the window its Range asks for (a small range of a large file is not 64 KiB).
 * The count is raised when the body is written, should it come out larger.
 */
function queuedSize(size: number, window: Window): number {
  const held = Math.min(size, QUEUED_STREAM_BYTES);
  return typeof window === 'object' && window !== null
    ? Math.min(held, window.end - window.start + 1)
    : held;
}

/** The same file, unchanged: what was decided from one stat holds for the other. */
function sameVersion(a: Stats, b: Stats): boolean {
  return a.ino === b.ino && a.dev === b.dev && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

/** The error for a file that ended before the window its stat promised was read. */
function shrank(file: string, start: number, end: number, size: number, read: number): Error {
  return new Error(
    `keel: sendFile: ${file} shrank while it was read: expected bytes ${start}-${end} ` +
      `(${end - start + 1} bytes) of the ${size} its stat gave, read ${read}`,
  );
}

const SEND_FILE_KEYS = keysOf<SendFileOptions>({ root: 0, dotfiles: 0 });

/** Serves one file; resolves when the response is finished (or the client went away). */
export async function sendFile(
  target: FileTarget,
  path: string,
  options: SendFileOptions = {},
): Promise<void> {
  if (typeof path !== 'string') throw typeError('sendFile path', 'a string', path);
  checkOptions('sendFile options', options, SEND_FILE_KEYS);
  if (options.root !== undefined && typeof options.root !== 'string') {
    throw typeError('sendFile root', 'a directory path string', options.root);
  }
  // `root: process.env.DIR ?? ''` with DIR unset: resolve('') is the working directory, and the
  // app's own files were served from it.
  if (options.root === '' || options.root?.includes('\0')) {
    throw rangeError('sendFile root', 'a directory path (not empty, no NUL byte)', options.root);
  }
  const dotfiles = oneOf('sendFile dotfiles', options.dotfiles ?? 'ignore', DOTFILES);
  // The client left already: nothing to open, nothing to send (onResponse: status 0).
  if (target.res.destroyed) return;
  const { file, base } = await resolveFile(path, options.root, dotfiles);
  let handle: FileHandle;
  // The window a queued response asks for, decided from the path's stat to count it; used again
  // when the opened file is that same version (undefined: not decided yet).
  let early: Window | undefined;
  let found: Stats;
  try {
    // A FIFO, socket or device is refused before it is opened: opening a FIFO blocks.
    found = await statPath(file);
    if (!found.isFile()) throw new HttpException(404);
    // Counted toward its connection's cap while it waits behind another response, before the
    // file is opened (pipelined GETs of a large file each held a descriptor and a chunk); its
    // connection gone or over the cap: nothing is opened or sent. A HEAD is counted by its head.
    if (target.method !== 'HEAD') {
      // Not queued (it has its connection's socket): fitsQueue counts nothing, so nothing is parsed.
      if (target.res.socket === null) early = requestedWindow(target, found, etagOf(found));
      const size = early === undefined ? 0 : queuedSize(found.size, early);
      if (!fitsQueue(target.res, target.watch, size)) return;
    }
    handle = await open(file, OPEN_FLAGS);
  } catch (err) {
    throw fsError(err);
  }
  let ownsHandle = true;
  /**
   * An answer in one piece goes out once the file is closed: its request is over when it ends,
   * as a buffered reply's is. Closed after it, the request would be judged a moment later, when
   * its connection may be gone for another reason (Connection: close, the next request's parse
   * error), and taken for cut.
   */
  const closeFirst = async (): Promise<boolean> => {
    ownsHandle = false;
    await handle.close();
    return !target.res.destroyed;
  };
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new HttpException(404);
    if (base !== undefined) await checkOpened(handle, stat, file, base, dotfiles);
    const { res, method, headers: req } = target;
    if (res.destroyed) return; // the client left while the file was looked up
    const size = stat.size;
    const etag = etagOf(stat);
    const headers = [
      'etag',
      etag,
      'last-modified',
      lastModifiedHeader(stat.mtimeMs, target.watch.clock.now()),
      'accept-ranges',
      'bytes',
      ...target.extra,
    ];
    if (isBodiless(target.status)) {
      // Neither the file nor its length is sent (a Content-Length in a 204 is forbidden, §8.6);
      // the validators stay, which a 304 needs.
      if (await closeFirst()) endBodiless(res, target.status, headers, target.watch);
      return;
    }
    const cacheable = (method === 'GET' || method === 'HEAD') && target.status === 200;
    // RFC 9110 §13.2.2: If-Match / If-Unmodified-Since first, then If-None-Match / IMS, then Range.
    const now = cacheable ? target.watch.clock.now() : 0;
    if (cacheable && isPreconditionFailed(req, etag, stat.mtimeMs, now)) {
      throw new HttpException(412);
    }
    if (cacheable && isNotModified(req, etag, stat.mtimeMs, now)) {
      if (!(await closeFirst())) return;
      res.writeHead(304, headers);
      res.end();
      watchEnded(res, target.watch);
      return;
    }
    let start = 0;
    let end = size - 1;
    let status = target.status;
    const range =
      early !== undefined && sameVersion(found, stat) ? early : requestedWindow(target, stat, etag);
    if (range !== null) {
      if (range === 'unsatisfiable') {
        if (!(await closeFirst())) return;
        res.writeHead(416, [
          'content-range',
          `bytes */${size}`,
          'content-length',
          '0',
          ...target.extra,
        ]);
        res.end();
        watchEnded(res, target.watch);
        return;
      }
      ({ start, end } = range);
      status = 206;
      headers.push('content-range', `bytes ${start}-${end}/${size}`);
    }
    const length = size === 0 ? 0 : end - start + 1;
    // A type the handler set wins: the extension is only a guess (and a file may have none).
    if (!res.hasHeader('content-type')) {
      headers.push('content-type', mime.contentType(extname(file)) || 'application/octet-stream');
    }
    headers.push('content-length', String(length));
    if (method === 'HEAD' || length === 0) {
      if (!(await closeFirst())) return;
      res.writeHead(status, headers);
      res.end();
      watchEnded(res, target.watch);
      return;
    }
    if (length <= SMALL_FILE) {
      const buf = Buffer.allocUnsafe(length);
      // A read may return fewer bytes than asked before the end (FUSE, network filesystems,
      // sysfs): read on until the window is in, or the file ends.
      let bytesRead = 0;
      while (bytesRead < length) {
        const at = bytesRead;
        const { bytesRead: got } = await handle.read(buf, at, length - at, start + at);
        if (got === 0) break; // the file ended: it shrank since stat
        bytesRead += got;
      }
      // The file shrank since stat: the length it promised cannot be met, and nothing is sent
      // yet, so it fails as a read error does (a 500), not as a 200 cut short.
      if (bytesRead !== length) {
        throw shrank(file, start, end, size, bytesRead);
      }
      if (!(await closeFirst())) return;
      res.writeHead(status, headers);
      res.end(buf);
      watchEnded(res, target.watch);
      return;
    }
    res.writeHead(status, headers);
    ownsHandle = false; // the stream closes it
    const stream = handle.createReadStream({ start, end, autoClose: true });
    const unwatch = watchSend(res, target.watch);
    // Judged when it finished: pipeline resolves once the descriptor is closed too, and a client
    // that left on the last byte meanwhile would find the response taken for cut.
    const done = whenDone(res);
    // The file shrank while it was read: the client still waits for the bytes Content-Length
    // promised and would read the next response on this connection as them. End the connection
    // (before pipeline's own 'end' listener, added after this one, ends the response).
    let short: Error | null = null;
    stream.once('end', () => {
      if (stream.bytesRead === length) return;
      short = shrank(file, start, end, size, stream.bytesRead);
      res.destroy();
    });
    try {
      // Ended with the file's last byte, not once its descriptor closed. Still watched: the
      // tail may stay queued for a client that stopped reading.
      await pipeline(stream, res);
      await done;
    } catch {
      // Client gone, too slow (sendTimeout) or read error mid-body: pipeline destroyed the
      // response and the file stream (closing the fd); nothing to send.
      return;
    } finally {
      unwatch();
    }
    // The file shrank: the connection is ended already; the app is told why.
    if (short !== null) throw short;
  } finally {
    if (ownsHandle) await handle.close();
  }
}
