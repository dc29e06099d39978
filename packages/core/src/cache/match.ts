import { answer, rangeError } from '../internal/checks';
import { ABSOLUTE, splitURL } from '../internal/url';
import { checkStrings } from '../request/fields';
import type { CacheMeta, InvalidateTarget } from '../types/client';

/** What invalidation needs to know about a cached entry or an in-flight read. */
export interface Matchable {
  key: string;
  path: string;
  origin: string;
  tags: readonly string[];
  meta(): CacheMeta;
}

export type TargetMatcher = (item: Matchable) => boolean;

/**
 * The one runtime check of an invalidation target, wherever one is written (`client.invalidate`,
 * `cancelReads`, a mutation's `invalidate`, a server event): a path string, an array of tag
 * strings, or a predicate over CacheMeta. Anything else (a number, an object, an array holding a
 * non-string) is a TypeError naming `option`, never a silently different meaning.
 */
export function checkInvalidateTarget(
  value: unknown,
  option: string,
): asserts value is InvalidateTarget {
  if (typeof value !== 'string' && typeof value !== 'function') {
    checkStrings(option, value, TARGET, 'a tag string (an array target lists tags)');
  }
}

const TARGET = 'a path string, an array of tag strings or a predicate function';

/**
 * Compiles an invalidation target once into a predicate (checked by checkInvalidateTarget).
 * - string: a path, segment-aware. `/users` matches `/users`, `/users/7`, `/users?x=1`, not
 *   `/users-x`. A relative one is read as a request URL's path (`/a b` is `/a%20b`). An absolute URL also pins the origin. A trailing slash is ignored; `/` is all.
 *   A relative path also matches under the path of `baseURL` (the client's), when it has one.
 * - string[]: tags; an entry matches when it carries any of them.
 * - function: a predicate over CacheMeta.
 */
export function compileTarget(
  target: InvalidateTarget,
  baseURL?: string,
  option = 'target',
): TargetMatcher {
  checkInvalidateTarget(target, option);
  if (typeof target === 'function') return (item) => answer(option, target(item.meta()));
  if (Array.isArray(target)) {
    const tags = new Set(target);
    return (item) => item.tags.some((t) => tags.has(t));
  }
  // A string (Array.isArray does not narrow a readonly array out of the type).
  let origin: string | undefined;
  let path = target as string;
  if (ABSOLUTE.test(target as string)) {
    ({ origin, path } = splitURL(target as string));
    // splitURL's '' origin: it did not parse.
    if (!origin) throw rangeError(option, 'a valid URL', target);
  } else {
    // Read as a request URL's path is (percent-encoded, dot segments resolved; query and
    // fragment dropped), so `/a b` names the entries of get('/a b'), stored as `/a%20b`.
    path = splitURL(`http://h${path[0] === '/' ? '' : '/'}${path}`).path;
    // A relative target is written like the request URLs, which were joined onto a baseURL that
    // may carry a path (`/v1`): `/users` must also reach the entries stored as `/v1/users`.
    // (A baseURL that does not parse has path `/`: no prefix.)
    const basePath = baseURL ? splitURL(baseURL).path.replace(/\/$/, '') : '';
    if (basePath !== '') {
      const bare = pathMatcher(path);
      const prefixed = pathMatcher(basePath + path);
      return (item) => bare(item) || prefixed(item);
    }
  }
  return pathMatcher(path, origin);
}

export function pathMatcher(path: string, origin?: string): TargetMatcher {
  const base = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  const prefix = base === '/' ? '/' : `${base}/`;
  return (item) =>
    (origin === undefined || item.origin === origin) &&
    (item.path === base || item.path.startsWith(prefix));
}
