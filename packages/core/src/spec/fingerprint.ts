import { canonicalizeURL } from './url';

export interface FingerprintInput {
  method: string;
  url: string;
  headers?: Record<string, string> | undefined;
  body?: unknown;
}

/**
 * The cache / dedup key: `METHOD canonical-url`, plus the request-level headers (names
 * lower-cased, sorted) and a string body when present. Two calls that would send the same bytes
 * get the same key. Client-wide default headers are the same for every request of a client, so
 * the client leaves them out.
 *
 * @example createFingerprint({ method: 'get', url: 'https://a.test/x?b=2&a=1' }) // 'GET https://a.test/x?a=1&b=2'
 */
export function createFingerprint({ method, url, headers, body }: FingerprintInput): string {
  let canonical: string;
  try {
    canonical = canonicalizeURL(url);
  } catch {
    canonical = url;
  }
  return fingerprintOf(method.toUpperCase(), canonical, headers, body);
}

/** The key from already-canonical parts (the client's hot path skips re-parsing the URL). */
export function fingerprintOf(
  method: string,
  canonicalUrl: string,
  headers: Record<string, string> | undefined,
  body: unknown,
  responseType?: string,
): string {
  let key = `${method} ${canonicalUrl}`;
  if (headers) {
    const names = Object.keys(headers);
    if (names.length > 0) {
      const pairs = names.map((n) => `${n.toLowerCase()}:${headers[n]}`).sort();
      key += ` |h ${pairs.join('\n')}`;
    }
  }
  if (body !== undefined && body !== null) {
    key += ` |b ${typeof body === 'string' ? body : safeJson(body)}`;
  }
  // The same URL read as text and as JSON are different data.
  if (responseType !== undefined) key += ` |r ${responseType}`;
  return key;
}

function safeJson(body: unknown): string {
  try {
    return JSON.stringify(body) ?? String(body);
  } catch {
    return String(body);
  }
}
