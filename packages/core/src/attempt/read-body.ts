import { HttpError } from '../errors/http-error';
import type { FailedRequest } from '../errors/keel-error';
import { ParseError } from '../errors/parse-error';
import { ResponseTooLargeError } from '../errors/response-too-large-error';
import { typeError } from '../internal/checks';
import { systemClock } from '../internal/clock';
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
 * limit is passed (at once when Content-Length says so), its download cancelled. `cut` (for a
 * fetch that never read its own signal): the attempt's end cancels the download, by the
 * canceller keel's reader hands it, or, for a `stream` body, by the abort of its `signal`.
 */
export async function readResponse<T>(
  res: Response,
  read: BodyRead,
  clock: { now(): number } = systemClock,
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
    /** A body to count or to cut: not one the platform may read alone. */
    const held = body && (limit !== undefined || cut);
    if (type === 'stream') {
      // Read by the caller: counted (and cancellable) as it is read.
      data = held ? limitStream(body, limit, read, status, cut) : body;
    } else if (type !== 'text' && type !== 'json') {
      // Bytes counted or cut are handed to the platform, which makes the ArrayBuffer (a copy of
      // exactly them) or the Blob (with the MIME type fetch gives one) from them; uncounted and
      // uncut, it reads them itself, perhaps without a copy.
      data = await (held
        ? new Response(
            (await readBytes(body, limit, read, status, cut)) as Uint8Array<ArrayBuffer>,
            { headers },
          )
        : res)[type]();
    } else {
      // Text and JSON are read by keel's own reader: in Node it costs less than Response.text()
      // (6% of a loopback GET's instructions), and far less than piping the body through a
      // counting stream (2.7x). No stream: a Response-like object (a test double with only
      // text()) reads itself.
      const text = body
        ? utf8.decode(await readBytes(body, limit, read, status, cut))
        : await res.text();
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
    const after = parseRetryAfter(headers.get('retry-after'), clock.now());
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
 * How the attempt's end stops a body being read, for a fetch that never read its own signal:
 * `signal` (made when read) aborts, or the canceller last handed to `cancelWith` is called.
 */
export interface BodyCut {
  readonly signal: AbortSignal;
  cancelWith(cancel: ((reason: unknown) => void) | undefined): void;
}

const tagOf = Object.prototype.toString;

/** Shared: a decode that is not streamed keeps no state between calls. */
const utf8 = /* @__PURE__ */ new TextDecoder();

/**
 * `body`'s bytes, read by a reader `cut` cancels, failing with ResponseTooLargeError (the rest
 * cancelled) as soon as they pass `limit`. Decoded by the caller at once, from one buffer: a
 * decoder per body cost more than the whole read.
 */
async function readBytes(
  body: ReadableStream<Uint8Array>,
  /** undefined: no limit (a count compared with it is never over). */
  limit: number | undefined,
  request: FailedRequest,
  status: number,
  cut: BodyCut | undefined,
): Promise<Uint8Array> {
  const reader = body.getReader();
  const stop = (reason: unknown) => void reader.cancel(reason).catch(noop);
  cut?.cancelWith(stop);
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      // A chunk that is no bytes (a custom stream's string, say) is refused as fetch refuses it:
      // by its tag, not instanceof (a jsdom page's Uint8Array is not the one undici's chunks
      // are). Either failure leaves the rest undownloaded.
      const error =
        tagOf.call(value) !== '[object Uint8Array]'
          ? typeError('a response body chunk', 'a Uint8Array', value)
          : (size += value.byteLength) > (limit as number)
            ? new ResponseTooLargeError(request, { limit: limit!, received: size, status })
            : undefined;
      if (error) {
        stop(error);
        throw error;
      }
      chunks.push(value);
    }
  } finally {
    // Let go of the reader once read: an ended attempt's closures can outlive it (held from
    // objects awaiting a major GC), and a reader kept from there drags its stream and buffers
    // through every minor GC (+20% instructions per request, bench/scheduler.bench.mjs).
    cut?.cancelWith(undefined);
  }
  if (chunks.length === 1) return chunks[0]!;
  const all = new Uint8Array(size);
  size = 0;
  for (const chunk of chunks) {
    all.set(chunk, size);
    size += chunk.byteLength;
  }
  return all;
}

/**
 * `body`, erroring with ResponseTooLargeError (which cancels the download) past `limit` bytes,
 * and with the reason `cut`'s signal aborts with (cancelling the download too).
 */
function limitStream(
  body: ReadableStream<Uint8Array>,
  /** undefined: no limit (a count compared with it is never over). */
  limit: number | undefined,
  request: FailedRequest,
  status: number,
  cut: BodyCut | undefined,
): ReadableStream<Uint8Array> {
  let received = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        received += chunk.byteLength;
        if (received > (limit as number)) {
          controller.error(new ResponseTooLargeError(request, { limit: limit!, received, status }));
        } else controller.enqueue(chunk);
      },
    }),
    { signal: cut?.signal },
  );
}
