import { HttpError } from '../errors/http-error';
import type { FailedRequest } from '../errors/keel-error';
import { ParseError } from '../errors/parse-error';
import { ResponseTooLargeError } from '../errors/response-too-large-error';
import { typeError } from '../internal/checks';
import { noop } from '../internal/noop';
import { JSON_TYPE } from '../request/body';
import type { ApiResponse } from '../types/client';
import type { ResponseBodyType } from '../types/options';
import { parseRetryAfter } from './retry-after';
import { isSuccessStatus } from './status';

/** Bodies decoded as text by default: text/*, XML, forms, scripts, and a missing Content-Type. */
const TEXT_TYPE =
  /^\s*(?:text\/|[^;]*[/+]xml\b|application\/(?:x-www-form-urlencoded|javascript|ecmascript|graphql|x-ndjson|yaml|x-yaml)\b)/i;

/**
 * The request a body is read for: its method and URL (for errors), `responseType` (undefined:
 * from the Content-Type) and limit. A RequestSpec fits as it is.
 */
export interface BodyRead extends FailedRequest {
  readonly responseType?: ResponseBodyType | undefined;
  /** Bytes; undefined for no limit. */
  readonly maxResponseBytes?: number | undefined;
}

/**
 * The body type a Content-Type calls for: `json` for JSON (`application/json`, `*+json`), `text`
 * for textual types and for none at all, `arrayBuffer` for anything else (octet-stream, images,
 * PDFs, ...): a binary body is never decoded as text, which would replace bytes with U+FFFD.
 */
export function bodyTypeOf(contentType: string | null): ResponseBodyType {
  if (!contentType) return 'text';
  if (JSON_TYPE.test(contentType)) return 'json';
  return TEXT_TYPE.test(contentType) ? 'text' : 'arrayBuffer';
}

/**
 * Turns a fetch Response into an ApiResponse, or throws HttpError for a non-2xx status.
 *
 * Body: none for HEAD and 204/205/304 (data is undefined; one sent anyway is cancelled).
 * Otherwise as `read.responseType` says (`json`, `text`, `arrayBuffer`, `blob`, or `stream`: the
 * body's ReadableStream, unread), or by the Content-Type (`bodyTypeOf`). An empty JSON body is undefined; a 2xx JSON body that does not
 * parse is a ParseError. An error status's body is read by its Content-Type whatever the
 * responseType, and kept as raw text when it claims JSON but does not parse.
 *
 * `read.maxResponseBytes`: a body larger than that fails with ResponseTooLargeError as soon as the
 * limit is passed (at once when Content-Length says so), its download cancelled; a `stream` body
 * errors so when read past it. `cut`: the attempt's end cancels the download, by the canceller
 * keel's reader (or a `stream` body not yet handed over) hands it.
 */
export async function readResponse<T>(
  res: Response,
  read: BodyRead,
  /** The time, for an error status's Retry-After date (read by the caller, ahead). */
  now: number = Date.now(),
  cut?: BodyCut,
): Promise<ApiResponse<T>> {
  // A network-error Response (`Response.error()`, what a mock returns for a failed connection;
  // fetch itself rejects), or no Response at all (null, a plain object: a wrapper that forgot to
  // return the response), is no answer: thrown, it fails like a rejection with it (a NetworkError
  // whose cause it is), not with a TypeError from reading it.
  if (typeof res?.headers?.get !== 'function' || res.type === 'error') throw res;
  const { status, statusText, headers } = res;
  const ok = isSuccessStatus(status);
  let data: unknown;
  if (read.method !== 'HEAD' && status !== 204 && status !== 205 && status !== 304) {
    const limit = read.maxResponseBytes;
    if (limit !== undefined) {
      // No header is 0, never over a limit (>= 0).
      const received = Number(headers.get('content-length'));
      if (received > limit) {
        void res.body?.cancel().catch(noop);
        throw new ResponseTooLargeError(read, { limit, received, status });
      }
    }
    const type = (ok && read.responseType) || bodyTypeOf(headers.get('content-type'));
    const body = res.body;
    const textual = type === 'text' || type === 'json';
    // Read by keel's reader: text and JSON (in Node it costs less than Response.text(), 6% of a
    // loopback GET's instructions, and far less than piping the body through a counting stream,
    // 2.7x), and every body to count or to cut. No stream: a Response-like object (a test double
    // with only text()) reads itself.
    const chunks =
      body && (textual || limit !== undefined || (cut && !cut.tied))
        ? chunksOf(body, limit, read, status, cut)
        : undefined;
    if (type === 'stream') {
      // Read by the caller, after the attempt: counted as it is read. Cut only if the attempt
      // ends before handing it over (no caller will read it then).
      data = chunks ? streamOf(chunks) : body;
    } else if (!textual) {
      // Bytes counted or cut are handed to the platform, which makes the ArrayBuffer (a copy of
      // exactly them) or the Blob (with the MIME type fetch gives one) from them; uncounted and
      // uncut, it reads them itself, perhaps without a copy.
      data = await (chunks
        ? new Response((await readBytes(chunks, cut)) as Uint8Array<ArrayBuffer>, { headers })
        : res)[type]();
    } else {
      const text = chunks ? utf8.decode(await readBytes(chunks, cut)) : await res.text();
      data = text;
      if (type === 'json') {
        try {
          data = text === '' ? undefined : JSON.parse(text);
        } catch (cause) {
          // An error status's body that claims JSON but does not parse stays its raw text.
          if (ok) throw new ParseError(read, { status, body: text, cause });
        }
      }
    }
  } else {
    // None read: a body sent anyway (a custom fetch, a proxy) is cancelled, or its stream (under
    // undici, its socket) stays busy. A cancel that throws (a body that is no web stream) or
    // rejects (a locked stream) is no failure of the request.
    try {
      void res.body?.cancel().catch(noop);
    } catch {}
  }
  if (!ok) {
    const after = parseRetryAfter(headers.get('retry-after'), now);
    throw new HttpError(read, {
      retryAfter: after >= 0 ? after : undefined,
      status,
      statusText,
      headers,
      data,
    });
  }
  return { data: data as T, status, statusText, headers };
}

/**
 * How the attempt's end stops a body being read: the canceller last handed to `cancelWith` is
 * called.
 */
export interface BodyCut {
  cancelWith(cancel: ((reason: unknown) => void) | undefined): void;
  /**
   * The fetch read its signal, which a platform fetch ties the body to: only bodies keel reads
   * anyway (text, JSON, counted) go through its reader; others are left to the platform's read.
   */
  tied?: boolean;
}

const tagOf = Object.prototype.toString;

/** Shared: a decode that is not streamed keeps no state between calls. */
const utf8 = /* @__PURE__ */ new TextDecoder();

/**
 * Reads `body` for keel, by a reader `cut` cancels: `take` checks each chunk its `reader` reads,
 * counting `size`, and throws (the rest cancelled, undownloaded) for one that is no bytes (a
 * custom stream's string, say; refused as fetch refuses it, by its tag, not instanceof: a jsdom
 * page's Uint8Array is not the one undici's chunks are) or that takes `size` past `limit`
 * (ResponseTooLargeError). One reader for every body keel reads: counted the same way whether
 * it is read whole or streamed to the caller.
 */
function chunksOf(
  body: ReadableStream<Uint8Array>,
  /** undefined: no limit (a count compared with it is never over). */
  limit: number | undefined,
  request: FailedRequest,
  status: number,
  cut: BodyCut | undefined,
) {
  const reader = body.getReader();
  const chunks = {
    reader,
    size: 0,
    cancel: (reason: unknown) => void reader.cancel(reason).catch(noop),
    take(chunk: Uint8Array): Uint8Array {
      const error =
        tagOf.call(chunk) !== '[object Uint8Array]'
          ? typeError('a response body chunk', 'a Uint8Array', chunk)
          : (chunks.size += chunk.byteLength) > (limit as number)
            ? new ResponseTooLargeError(request, { limit: limit!, received: chunks.size, status })
            : undefined;
      if (error) {
        chunks.cancel(error);
        throw error;
      }
      return chunk;
    },
  };
  cut?.cancelWith(chunks.cancel);
  return chunks;
}

type Chunks = ReturnType<typeof chunksOf>;

/**
 * The bytes of `chunks` (to the end), `cut`'s canceller let go once read. Decoded by the caller
 * at once, from one buffer: a decoder per body cost more than the whole read.
 */
async function readBytes(chunks: Chunks, cut: BodyCut | undefined): Promise<Uint8Array> {
  const all: Uint8Array[] = [];
  try {
    for (;;) {
      const { done, value } = await chunks.reader.read();
      if (done) break;
      all.push(chunks.take(value));
    }
  } finally {
    // Let go of the reader once read: an ended attempt's closures can outlive it (held from
    // objects awaiting a major GC), and a reader kept from there drags its stream and buffers
    // through every minor GC (+20% instructions per request, bench/scheduler.bench.mjs).
    cut?.cancelWith(undefined);
  }
  if (all.length === 1) return all[0]!;
  const bytes = new Uint8Array(chunks.size);
  let at = 0;
  for (const chunk of all) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

/**
 * A stream of `chunks` for its caller to read (errored as `take` throws, past a limit say).
 * Pulled as its reader reads, one chunk ahead at most (backpressure); cancelling it cancels
 * `body`.
 */
function streamOf(chunks: Chunks): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await chunks.reader.read();
      done ? controller.close() : controller.enqueue(chunks.take(value));
    },
    cancel: chunks.cancel,
  });
}
