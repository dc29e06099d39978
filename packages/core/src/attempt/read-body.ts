import { HttpError } from '../errors/http-error';
import { ParseError } from '../errors/parse-error';
import { ResponseTooLargeError } from '../errors/response-too-large-error';
import { systemClock } from '../internal/clock';
import { noop } from '../internal/noop';
import type { ApiResponse } from '../types/client';
import type { HttpMethod, ResponseBodyType } from '../types/options';
import { parseRetryAfter } from './retry-after';
import { isSuccessStatus } from './status';

const JSON_TYPE = /[/+]json\b/i;
/** Bodies decoded as text by default: text/*, XML, forms, scripts, and a missing Content-Type. */
const TEXT_TYPE =
  /^\s*(?:text\/|[^;]*[/+]xml\b|application\/(?:x-www-form-urlencoded|javascript|ecmascript|graphql|x-ndjson|yaml|x-yaml)\b)/i;

/** How a body is read: the request's `responseType` (undefined: from the Content-Type) and limit. */
export interface BodyRead {
  readonly responseType: ResponseBodyType | undefined;
  /** Bytes; undefined for no limit. */
  readonly maxResponseBytes: number | undefined;
}

const DEFAULT_READ: BodyRead = {
  responseType: undefined,
  maxResponseBytes: Number.POSITIVE_INFINITY,
};

/**
 * The body type a Content-Type calls for: `json` for JSON (`application/json`, `*+json`), `text`
 * for textual types and for none at all, `arrayBuffer` for anything else (octet-stream, images,
 * PDFs, ...): a binary body is never decoded as text, which would replace bytes with U+FFFD.
 */
export function bodyTypeOf(contentType: string | null): ResponseBodyType {
  if (contentType === null || contentType === '') return 'text';
  if (JSON_TYPE.test(contentType)) return 'json';
  return TEXT_TYPE.test(contentType) ? 'text' : 'arrayBuffer';
}

/**
 * Turns a fetch Response into an ApiResponse, or throws HttpError for a non-2xx status.
 *
 * Body: none for HEAD and 204/205/304 (data is undefined). Otherwise as `read.responseType` says
 * (`json`, `text`, `arrayBuffer`, `blob`, or `stream`: the body's ReadableStream, unread), or by
 * the Content-Type (`bodyTypeOf`). An empty JSON body is undefined; a 2xx JSON body that does not
 * parse is a ParseError. An error status's body is read by its Content-Type whatever the
 * responseType, and kept as raw text when it claims JSON but does not parse.
 *
 * `read.maxResponseBytes`: a body larger than that fails with ResponseTooLargeError as soon as the
 * limit is passed (at once when Content-Length says so), its download cancelled.
 */
export async function readResponse<T>(
  res: Response,
  method: HttpMethod,
  url: string,
  clock: { now(): number } = systemClock,
  read: BodyRead = DEFAULT_READ,
): Promise<ApiResponse<T>> {
  const ok = isSuccessStatus(res.status);
  let data: unknown;
  if (method !== 'HEAD' && res.status !== 204 && res.status !== 205 && res.status !== 304) {
    const limit = read.maxResponseBytes;
    if (limit !== undefined) {
      const declared = Number(res.headers.get('content-length') ?? Number.NaN);
      if (declared > limit) {
        void res.body?.cancel().catch(noop);
        throw tooLarge(limit, declared, res, method, url);
      }
    }
    const contentType = res.headers.get('content-type');
    const type =
      ok && read.responseType !== undefined ? read.responseType : bodyTypeOf(contentType);
    switch (type) {
      case 'json': {
        const text = await readText(res, limit, method, url);
        if (text !== '') {
          try {
            data = JSON.parse(text);
          } catch (cause) {
            if (ok)
              throw new ParseError({ method, url }, { status: res.status, body: text, cause });
            data = text;
          }
        }
        break;
      }
      case 'text':
        data = await readText(res, limit, method, url);
        break;
      case 'arrayBuffer':
        data =
          limit === undefined
            ? await res.arrayBuffer()
            : (await readBytes(res, limit, method, url)).buffer;
        break;
      case 'blob':
        data =
          limit === undefined
            ? await res.blob()
            : new Blob([await readBytes(res, limit, method, url)], {
                type: contentType ?? '',
              });
        break;
      case 'stream':
        data = limitStream(res, limit, method, url);
        break;
    }
  }
  if (!ok) {
    const header = res.headers.get('retry-after');
    const after = header === null ? -1 : parseRetryAfter(header, clock.now());
    throw new HttpError(
      { method, url },
      {
        retryAfter: after >= 0 ? after : undefined,
        status: res.status,
        statusText: res.statusText,
        headers: res.headers,
        data,
      },
    );
  }
  return { data: data as T, status: res.status, statusText: res.statusText, headers: res.headers };
}

function readText(
  res: Response,
  limit: number | undefined,
  method: string,
  url: string,
): Promise<string> {
  if (limit === undefined) return res.text();
  // UTF-8, like Response.text(): fetch ignores a charset parameter.
  return readBytes(res, limit, method, url).then((bytes) => new TextDecoder().decode(bytes));
}

/** Reads the whole body, failing as soon as more than `limit` bytes arrive (the rest is cancelled). */
async function readBytes(
  res: Response,
  limit: number,
  method: string,
  url: string,
): Promise<Uint8Array<ArrayBuffer>> {
  const body = res.body;
  if (body === null) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      void reader.cancel().catch(noop);
      throw tooLarge(limit, total, res, method, url);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

/** The body as a stream; past `limit` bytes it errors with ResponseTooLargeError (and cancels). */
function limitStream(
  res: Response,
  limit: number | undefined,
  method: string,
  url: string,
): ReadableStream<Uint8Array> | null {
  const body = res.body;
  if (body === null || limit === undefined) return body;
  let total = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        total += chunk.byteLength;
        if (total > limit) controller.error(tooLarge(limit, total, res, method, url));
        else controller.enqueue(chunk);
      },
    }),
  );
}

function tooLarge(
  limit: number,
  received: number,
  res: Response,
  method: string,
  url: string,
): ResponseTooLargeError {
  return new ResponseTooLargeError({ method, url }, { limit, received, status: res.status });
}
