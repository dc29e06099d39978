import { parse as parseContentType } from 'content-type';
import { HttpException } from './errors';

/** Decodes one whole body (a TextDecoder, used without `stream`, keeps no state between calls). */
export interface Decoder {
  decode(input: Uint8Array): string;
  /** The WHATWG encoding name (a TextDecoder's); unset on the windows-1252 wrapper. */
  readonly encoding?: string;
}

/**
 * The charset of a text or urlencoded body, as TextDecoder (WHATWG Encoding) knows it: `null`
 * stands for UTF-8, read with Buffer#toString (the fast path, nothing allocated for it).
 */
export type BodyCharset = Decoder | null;

/**
 * WHATWG windows-1252 (also what `latin1`, `iso-8859-1` and `ascii` name) for bytes 0x80-0x9F.
 * Node 20.18.3+ / 22.13+ decode them as Latin-1 (U+0080-U+009F: nodejs/node#60888), so `€`
 * (0x80) came out a C1 control; corrected after. Harmless where Node is fixed: those code points
 * then come only from the five bytes the index maps to themselves.
 */
const WINDOWS_1252 = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152,
  0x8d, 0x17d, 0x8f, 0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122,
  0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
];
const C1 = /[\x80-\x9f]/g;

function windows1252(decoder: TextDecoder): Decoder {
  const fromC1 = (c: string): string => String.fromCharCode(WINDOWS_1252[c.charCodeAt(0) - 0x80]!);
  return { decode: (input) => decoder.decode(input).replace(C1, fromC1) };
}

/** What {@link charsetParam} returns for a UTF-8 label, without slicing it out. */
const UTF8 = 'utf-8';
/** A charset name keel looks up (RFC 9110 token; IANA names are within it). */
const CHARSET_NAME = /^[\w!#$%&'*+.^`|~-]{1,40}$/;
/** Decoders by lower-cased label: only labels TextDecoder knows are kept, so it stays small. */
const decoders = new Map<string, BodyCharset>();

function isOws(code: number): boolean {
  return code === 32 || code === 9;
}

/** `s[from, to)` is `lower` (ASCII, lower case), letters compared without case. */
function equalsIgnoringCase(s: string, from: number, to: number, lower: string): boolean {
  if (to - from !== lower.length) return false;
  for (let i = 0; i < lower.length; i++) {
    const c = s.charCodeAt(from + i);
    const want = lower.charCodeAt(i);
    if (c !== want && !(want >= 97 && want <= 122 && c === want - 32)) return false;
  }
  return true;
}

/** `s[start, end)`, OWS (spaces, tabs: RFC 9110 §5.6.3) around it skipped, is `lower`. */
function tokenIs(s: string, start: number, end: number, lower: string): boolean {
  while (start < end && isOws(s.charCodeAt(start))) start++;
  while (end > start && isOws(s.charCodeAt(end - 1))) end--;
  return equalsIgnoringCase(s, start, end, lower);
}

/**
 * Whether header value `value` is the token `lower` (ASCII, lower case): compared without case,
 * OWS around it skipped, nothing else (String#trim would also drop a no-break space). The way
 * keel reads a one-token header (Content-Encoding `identity`), as {@link isMediaType} reads the
 * media type; allocates nothing.
 */
export function isToken(value: string, lower: string): boolean {
  return tokenIs(value, 0, value.length, lower);
}

/**
 * Whether the media type of Content-Type `type` is `lower` (`type/subtype`, ASCII lower case):
 * compared without case, OWS (spaces, tabs: RFC 9110 §5.6.3) around it skipped, parameters not
 * looked at. The one way keel recognises a JSON request (the body reader, GraphQL); nothing is
 * sliced or lower-cased, so it allocates nothing.
 */
export function isMediaType(type: string, lower: string): boolean {
  const cut = type.indexOf(';');
  return tokenIs(type, 0, cut === -1 ? type.length : cut, lower);
}

/**
 * The media type of Content-Type `type`, lower-cased, as {@link isMediaType} reads it: OWS only
 * trimmed (String#trim would also drop a no-break space, which isMediaType keeps, so the body
 * reader and GraphQL would disagree on `application/json\u00a0`). Allocates: for the types
 * besides JSON, which isMediaType answers first.
 */
export function mediaTypeOf(type: string): string {
  let start = 0;
  let end = type.indexOf(';');
  if (end === -1) end = type.length;
  while (start < end && isOws(type.charCodeAt(start))) start++;
  while (end > start && isOws(type.charCodeAt(end - 1))) end--;
  return type.slice(start, end).toLowerCase();
}

/**
 * The `charset` parameter of a Content-Type: `null` when none, the shared `'utf-8'` for `utf-8` /
 * `utf8` in any case, else the label as sent. The grammar (RFC 9110 §8.3.1: quoted-strings with
 * quoted pairs, a quoted `;`, parameters without `=`, names without case, the first one counting)
 * is jshttp's `content-type`, as body-parser reads it. It allocates (an object per call), so the
 * common types (no parameter; exactly `;charset=utf-8`, any case, OWS after the `;`) are
 * answered without it: a JSON POST allocates nothing here.
 */
export function charsetParam(type: string): string | null {
  const semi = type.indexOf(';');
  if (semi === -1) return null;
  let start = semi + 1;
  while (start < type.length && isOws(type.charCodeAt(start))) start++;
  if (equalsIgnoringCase(type, start, type.length, 'charset=utf-8')) return UTF8;
  const value = parseContentType(type).parameters.charset;
  if (value === undefined) return null;
  const lower = value.toLowerCase();
  return lower === 'utf-8' || lower === 'utf8' ? UTF8 : value;
}

/** The decoder for a label (`null`: it is UTF-8), or undefined when TextDecoder has none. */
function decoderFor(label: string): BodyCharset | undefined {
  const key = label.toLowerCase();
  const known = decoders.get(key);
  if (known !== undefined) return known;
  let decoder: TextDecoder;
  try {
    // Not fatal: a byte the charset has no character for becomes U+FFFD, as in UTF-8 bodies.
    decoder = new TextDecoder(key);
  } catch {
    return undefined; // an unknown label, or WHATWG's "replacement" (ISO-2022-KR...)
  }
  const encoding = decoder.encoding;
  const charset =
    encoding === 'utf-8' ? null : encoding === 'windows-1252' ? windows1252(decoder) : decoder;
  decoders.set(key, charset);
  return charset;
}

function unsupported(label: string, json: boolean): HttpException {
  if (!CHARSET_NAME.test(label)) {
    return new HttpException(415, 'Unsupported charset in Content-Type (not a charset name)');
  }
  return new HttpException(
    415,
    json
      ? `Unsupported charset "${label}": JSON bodies are UTF-8 (RFC 8259)`
      : `Unsupported charset "${label}" in Content-Type`,
  );
}

/**
 * How a JSON, urlencoded or text body with Content-Type `type` is decoded: UTF-8 (`null`) when no
 * charset is declared or a UTF-8 one is, another charset's decoder for text and forms, or the 415
 * to answer: a charset TextDecoder does not know, or any but UTF-8 for JSON (RFC 8259 §8.1 makes
 * it UTF-8; body-parser answers 415 too, rather than read Latin-1 bytes as U+FFFD).
 */
export function bodyCharset(type: string, json: boolean): BodyCharset | HttpException {
  const label = charsetParam(type);
  if (label === null || label === UTF8) return null;
  const charset = CHARSET_NAME.test(label) ? decoderFor(label) : undefined;
  if (charset === undefined || (json && charset !== null)) return unsupported(label, json);
  return charset;
}

/** A body's bytes as text; a leading byte order mark is dropped (TextDecoder drops its own). */
export function decodeBody(buf: Buffer, charset: BodyCharset): string {
  if (charset !== null) return charset.decode(buf);
  const text = buf.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  const lower = code | 32;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
}

/** The byte `%XX` at `at` stands for, or -1 when `at` holds no such escape. */
function escapedByte(s: string, at: number): number {
  if (s.charCodeAt(at) !== 37 || at + 2 >= s.length) return -1;
  const high = hexValue(s.charCodeAt(at + 1));
  const low = hexValue(s.charCodeAt(at + 2));
  return high === -1 || low === -1 ? -1 : high * 16 + low;
}

/**
 * A form's text with each `+` written as the escaped UTF-16 space, in UTF-16 (the one charset
 * TextDecoder knows where a space is not the byte 0x20): querystring turns `+` into `%20` before
 * {@link formDecoder} sees it, one byte, half a code unit (U+FFFD, or merged with the escapes
 * after it). Other charsets: the text as it is.
 */
export function plusAsSpace(text: string, charset: Decoder): string {
  const encoding = charset.encoding;
  if ((encoding !== 'utf-16le' && encoding !== 'utf-16be') || !text.includes('+')) return text;
  return text.replaceAll('+', encoding === 'utf-16le' ? '%20%00' : '%00%20');
}

/**
 * querystring's `decodeURIComponent` for a form in another charset: each run of `%XX` escapes is
 * that charset's bytes (an HTML form percent-encodes what it sends in its own charset); the other
 * characters were decoded with the body already. A `%` without two hex digits stays as it is.
 */
export function formDecoder(charset: Decoder): (part: string) => string {
  return (part) => {
    let out = '';
    let last = 0;
    let at = part.indexOf('%');
    while (at !== -1) {
      if (escapedByte(part, at) === -1) {
        at = part.indexOf('%', at + 1);
        continue;
      }
      out += part.slice(last, at);
      const bytes: number[] = [];
      for (let byte = escapedByte(part, at); byte !== -1; byte = escapedByte(part, at)) {
        bytes.push(byte);
        at += 3;
      }
      out += charset.decode(Uint8Array.from(bytes));
      last = at;
      at = part.indexOf('%', at);
    }
    return last === 0 ? part : out + part.slice(last);
  };
}
