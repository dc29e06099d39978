/** One event of a stream: the fields of one block, as the connection hands them on. */
export interface SseMessage {
  /** The `event:` field; undefined when absent or empty (the event is then `message`). */
  event: string | undefined;
  /** The `data:` lines joined with `\n`. */
  data: string;
  /** The `id:` field of this block, when it had one (ids with NUL are ignored, as WHATWG says). */
  id: string | undefined;
}

export interface SseHandlers {
  onEvent(message: SseMessage): void;
  /** A `retry:` field made of digits: the reconnect delay the server asks for, in ms. */
  onRetry(ms: number): void;
  /** A comment line (`:`), which servers send as a keep-alive. */
  onComment?(): void;
  /**
   * A block with an `id:` but no `data:`: it dispatches nothing, yet sets the last event id
   * (WHATWG: the id buffer is applied when the block ends, with or without data).
   */
  onId?(id: string): void;
  /**
   * The event being read (its line not ended plus its `data:` lines so far) went over `max`
   * characters; `feed` throws what this throws.
   */
  onOverflow(): void;
}

/**
 * A `text/event-stream` parser (WHATWG HTML, "Event stream interpretation",
 * https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation)
 * fed decoded text in chunks of any size: returns `feed(chunk)`. A block without `data:`
 * dispatches nothing (its `id:` goes to `onId`); unknown fields and a non-numeric `retry:` are
 * ignored; a line not yet ended is kept for the next chunk (and dropped with the stream, as
 * WHATWG says), up to `max` characters of one event (a stream without line ends, or a block
 * without its blank line, would grow it forever); a CR is a line end at once, and a LF right after it, in the next chunk, is not
 * another. The byte-order mark is left to TextDecoder, which strips it. Small on purpose:
 * it is in every app that uses useServerEvents.
 */
export function sseParser(on: SseHandlers, max: number): (chunk: string) => void {
  // A line end: CRLF, CR or LF (one regex per parser: its lastIndex is the parser's own).
  const lineEnd = /\r\n|\r|\n/g;
  let data: string | undefined;
  let event: string | undefined;
  let id: string | undefined;
  const line = (text: string): void => {
    if (text === '') {
      if (data !== undefined) on.onEvent({ event, data, id });
      else if (id !== undefined) on.onId?.(id);
      data = event = id = undefined;
      return;
    }
    // An event over the limit whole in this chunk: caught before its blank line dispatches it.
    if (text.length + (data?.length ?? 0) > max) on.onOverflow();
    const colon = text.indexOf(':');
    if (colon === 0) {
      on.onComment?.();
      return;
    }
    const field = colon < 0 ? text : text.slice(0, colon);
    // One space after the colon is part of the syntax, not of the value.
    const value = colon < 0 ? '' : text.slice(colon + (text[colon + 1] === ' ' ? 2 : 1));
    if (field === 'data') data = data === undefined ? value : `${data}\n${value}`;
    else if (field === 'event') event = value || undefined;
    else if (field === 'id') id = value.includes('\0') ? id : value;
    else if (field === 'retry' && /^\d+$/.test(value)) on.onRetry(+value);
  };
  // The line not ended yet: each chunk is scanned on its own, once (rescanning the whole line at
  // each chunk made a large event quadratic); appending to it is cheap (a rope, flattened once).
  let rest = '';
  // The last chunk ended with a CR, already taken as a line end: a LF opening the next one is
  // the second half of that CRLF.
  let cr = false;
  return (chunk) => {
    if (chunk === '') return;
    let start = cr && chunk[0] === '\n' ? 1 : 0;
    lineEnd.lastIndex = start;
    for (let end = lineEnd.exec(chunk); end !== null; end = lineEnd.exec(chunk)) {
      line(rest + chunk.slice(start, end.index));
      rest = '';
      start = lineEnd.lastIndex;
    }
    cr = chunk.endsWith('\r');
    rest += chunk.slice(start);
    // Once per chunk: a chunk is bounded by the transport, what is kept across them is not.
    if (rest.length + (data?.length ?? 0) > max) on.onOverflow();
  };
}
