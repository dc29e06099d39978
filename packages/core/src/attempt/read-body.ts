import { HttpError } from '../errors/http-error';
import { ParseError } from '../errors/parse-error';
import { systemClock } from '../internal/clock';
import type { ApiResponse, HttpMethod } from '../types';
import { parseRetryAfter } from './retry-after';
import { isSuccessStatus } from './status';

const JSON_TYPE = /[/+]json\b/i;

/**
 * Turns a fetch Response into an ApiResponse, or throws HttpError for a non-2xx status.
 * Body: none for HEAD and 204/205/304 (data is undefined); JSON when the Content-Type says so
 * (`application/json`, `application/problem+json`, ...); text otherwise. An empty JSON body is
 * undefined. A 2xx JSON body that does not parse is a ParseError; on an error status the raw
 * text is kept as `data` instead.
 */
export async function readResponse<T>(
  res: Response,
  method: HttpMethod,
  url: string,
  clock: { now(): number } = systemClock,
): Promise<ApiResponse<T>> {
  const ok = isSuccessStatus(res.status);
  let data: unknown;
  if (method !== 'HEAD' && res.status !== 204 && res.status !== 205 && res.status !== 304) {
    const text = await res.text();
    if (!JSON_TYPE.test(res.headers.get('content-type') ?? '')) data = text;
    else if (text !== '') {
      try {
        data = JSON.parse(text);
      } catch (cause) {
        if (ok) throw new ParseError(res.status, text, cause);
        data = text;
      }
    }
  }
  if (!ok) {
    const header = res.headers.get('retry-after');
    const after = header === null ? -1 : parseRetryAfter(header, clock.now());
    throw new HttpError({
      retryAfter: after >= 0 ? after : undefined,
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
      data,
      url,
      method,
    });
  }
  return { data: data as T, status: res.status, statusText: res.statusText, headers: res.headers };
}
