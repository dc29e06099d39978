import type { IncomingMessage, ServerResponse } from 'node:http';
import { brotliCompress, constants, gzip } from 'node:zlib';
import compressible from 'compressible';
import Negotiator from 'negotiator';
import vary from 'vary';
import { checkOptions, integer, keysOf, rangeError, typeError } from './checks';

/** A content coding keel can produce. */
export type Encoding = 'br' | 'gzip';

/** Options for response compression (`createApp({ compression })`). */
export interface CompressionOptions {
  /** Smallest body compressed, in bytes: below it compression costs more than it saves. @default 1024 */
  threshold?: number | undefined;
  /** Codings offered, in the server's order of preference (the client's q-values come first). @default ['br', 'gzip'] */
  encodings?: readonly Encoding[] | undefined;
  /** Brotli quality 0-11; 11 is far slower for little gain on API responses. @default 4 */
  brotliQuality?: number | undefined;
  /** Gzip level 1-9. @default 6 */
  gzipLevel?: number | undefined;
}

/** {@link CompressionOptions} resolved once per app. */
export interface CompressionSettings {
  threshold: number;
  encodings: readonly Encoding[];
  offered: readonly string[];
  brotliQuality: number;
  gzipLevel: number;
}

/** Resolves `compression` once; `null` when it is off (the default). */
const COMPRESSION_KEYS = keysOf<CompressionOptions>({
  threshold: 0,
  encodings: 0,
  brotliQuality: 0,
  gzipLevel: 0,
});

export function resolveCompression(
  option: boolean | CompressionOptions | undefined,
): CompressionSettings | null {
  if (option === undefined || option === false) return null;
  const options = option === true ? {} : option;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw typeError('compression', 'true, false or an object', option);
  }
  checkOptions('compression', options, COMPRESSION_KEYS);
  const encodings = options.encodings ?? ['br', 'gzip'];
  const expected = "a non-empty array of 'br' and 'gzip'";
  if (!Array.isArray(encodings)) throw typeError('compression.encodings', expected, encodings);
  if (encodings.length === 0 || encodings.some((e) => e !== 'br' && e !== 'gzip')) {
    const bad = encodings.find((e) => e !== 'br' && e !== 'gzip');
    throw rangeError('compression.encodings', expected, bad === undefined ? encodings : bad);
  }
  return {
    threshold: integer('compression.threshold', options.threshold, 1024, 0, undefined, 'bytes'),
    encodings,
    offered: [...encodings, 'identity'],
    brotliQuality: integer('compression.brotliQuality', options.brotliQuality, 4, 0, 11),
    gzipLevel: integer('compression.gzipLevel', options.gzipLevel, 6, 1, 9),
  };
}

const NO_TRANSFORM = /(?:^|,)\s*no-transform\s*(?:,|$)/i;

/**
 * The coding for one buffered response, or null to send it as is. A compressible type gets
 * `Vary: Accept-Encoding` whatever the outcome, so caches keep the variants apart. Skipped: small
 * bodies, types that do not compress (images, archives...), responses that already have a
 * Content-Encoding or a Content-Range or say `Cache-Control: no-transform`, and clients that
 * accept no coding. A strong ETag of a response it compresses is made weak.
 */
export function chooseEncoding(
  settings: CompressionSettings,
  req: IncomingMessage,
  res: ServerResponse,
  contentType: string | null,
  length: number,
): Encoding | null {
  const type = contentType ?? res.getHeader('content-type');
  if (typeof type !== 'string' || compressible(type) !== true) return null;
  vary(res, 'Accept-Encoding');
  if (length < settings.threshold || res.hasHeader('content-encoding')) return null;
  // A range (a handler's 206) counts bytes of the identity body: compressed, it would name bytes
  // of one representation and carry another. nginx compresses no 206 either.
  if (res.hasHeader('content-range')) return null;
  const cacheControl = res.getHeader('cache-control');
  // As set: a string, or lines (an array, `setHeader('cache-control', ['public', 'no-transform'])`).
  if (cacheControl !== undefined && NO_TRANSFORM.test(String(cacheControl))) return null;
  if (req.headers['accept-encoding'] === undefined) return null;
  // negotiator 1.x takes the server's preference for equal q-values; its types predate that.
  const negotiator = new Negotiator(req) as unknown as {
    encoding(available: readonly string[], options: { preferred: readonly string[] }): unknown;
  };
  const chosen = negotiator.encoding(settings.offered, { preferred: settings.encodings });
  if (chosen !== 'br' && chosen !== 'gzip') return null;
  // A strong ETag promises these very bytes (RFC 9110 §8.8.3), and compressed ones are others:
  // weak, as nginx makes it, it still validates (If-None-Match compares weakly).
  const etag = res.getHeader('etag');
  if (typeof etag === 'string' && etag.startsWith('"')) res.setHeader('etag', `W/${etag}`);
  return chosen;
}

/** Compresses off the event loop (zlib's thread pool). */
export function compressBody(
  settings: CompressionSettings,
  encoding: Encoding,
  body: string | Uint8Array,
  done: (err: Error | null, out: Buffer) => void,
): void {
  if (encoding === 'br') {
    const params = {
      [constants.BROTLI_PARAM_QUALITY]: settings.brotliQuality,
      [constants.BROTLI_PARAM_SIZE_HINT]: typeof body === 'string' ? body.length : body.byteLength,
    };
    brotliCompress(body, { params }, done);
  } else {
    gzip(body, { level: settings.gzipLevel }, done);
  }
}
