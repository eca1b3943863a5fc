// A small Server-Sent Events reader for the tests, reading a Response body the
// way a browser's EventSource does (HTML Living Standard, "Parsing an event
// stream"): lines end in CRLF, LF or CR; a blank line dispatches the event;
// `:` lines are comments (kept here, so keepalives can be asserted); a single
// space after the colon is dropped; data lines join with LF.
import type { Harness } from './harness.ts';

export type SseItem = { kind: 'event'; event: string; data: string; id?: string; json: any } | { kind: 'comment'; text: string };

export class SseReader {
  private reader: ReadableStreamDefaultReader<Uint8Array>;
  private decoder = new TextDecoder();
  private buffer = '';
  private queue: SseItem[] = [];
  private pending: ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']> | null = null;
  private ended = false;
  private skipLf = false;
  // The event being built.
  private event = '';
  private data: string[] = [];
  private id: string | undefined;

  constructor(body: ReadableStream<Uint8Array>) {
    this.reader = body.getReader();
  }

  /** True once the server closed the stream and every item was read. */
  get done(): boolean {
    return this.ended && this.queue.length === 0;
  }

  /**
   * The next event or comment; null when the stream has ended. Rejects when
   * nothing arrives within `timeoutMs` (the read stays pending for the next call).
   */
  async next(timeoutMs = 3_000): Promise<SseItem | null> {
    const deadline = Date.now() + timeoutMs;
    while (this.queue.length === 0) {
      if (this.ended) return null;
      this.pending ??= this.reader.read();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), Math.max(0, deadline - Date.now()));
      });
      const result = await Promise.race([this.pending, timeout]).finally(() => clearTimeout(timer));
      if (result === 'timeout') throw new Error(`no SSE item within ${timeoutMs} ms`);
      this.pending = null;
      if (result.done) {
        this.feed(this.decoder.decode());
        // An event without its dispatching blank line at the end of the stream is dropped (as EventSource does).
        this.ended = true;
      } else {
        this.feed(this.decoder.decode(result.value, { stream: true }));
      }
    }
    return this.queue.shift()!;
  }

  /** The next `event:` frame, skipping comments; null at the end. */
  async nextEvent(timeoutMs = 3_000): Promise<Extract<SseItem, { kind: 'event' }> | null> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const item = await this.next(Math.max(1, deadline - Date.now()));
      if (item === null || item.kind === 'event') return item;
    }
  }

  /** Every item until the server ends the stream; rejects if it does not end within `timeoutMs`. */
  async readToEnd(timeoutMs = 5_000): Promise<SseItem[]> {
    const deadline = Date.now() + timeoutMs;
    const items: SseItem[] = [];
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`SSE stream did not end within ${timeoutMs} ms; got ${JSON.stringify(items.map(brief))}`);
      const item = await this.next(left).catch((err: Error) => {
        throw new Error(`${err.message}; SSE stream did not end within ${timeoutMs} ms; got ${JSON.stringify(items.map(brief))}`);
      });
      if (item === null) return items;
      items.push(item);
    }
  }

  /** Closes the stream from the client's side, as a client that goes away. */
  async cancel(): Promise<void> {
    this.ended = true;
    await this.reader.cancel().catch(() => {});
  }

  private feed(text: string): void {
    this.buffer += text;
    let at = 0;
    for (;;) {
      if (this.skipLf && at < this.buffer.length) {
        if (this.buffer[at] === '\n') at++;
        this.skipLf = false;
      }
      const m = /\r\n|\r|\n/.exec(this.buffer.slice(at));
      if (!m) break;
      const line = this.buffer.slice(at, at + m.index);
      // A CR at the very end may be the first half of a CRLF split across chunks.
      if (m[0] === '\r' && at + m.index + 1 === this.buffer.length) this.skipLf = true;
      at += m.index + m[0].length;
      this.line(line);
    }
    this.buffer = this.buffer.slice(at);
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0) {
        const data = this.data.join('\n');
        let json: any;
        try {
          json = JSON.parse(data);
        } catch {
          json = undefined;
        }
        this.queue.push({ kind: 'event', event: this.event || 'message', data, id: this.id, json });
      }
      this.event = '';
      this.data = [];
      return;
    }
    if (line.startsWith(':')) {
      this.queue.push({ kind: 'comment', text: line.slice(1).replace(/^ /, '') });
      return;
    }
    const colon = line.indexOf(':');
    const name = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (name === 'event') this.event = value;
    else if (name === 'data') this.data.push(value);
    else if (name === 'id' && !value.includes('\0')) this.id = value;
    // `retry` and unknown fields are ignored.
  }
}

export const brief = (item: SseItem) =>
  item.kind === 'comment' ? `:${item.text}` : `${item.event}${item.json?.status ? `(${item.json.status})` : ''}`;

export interface OpenedStream {
  res: Response;
  /** Present when the answer is 200 with a body. */
  sse: SseReader | null;
}

/** GET /api/v2/jobs/{id}/events like a client: the Response and, on 200, a reader over its body. */
export async function openEvents(h: Harness, id: string, init: RequestInit = {}): Promise<OpenedStream> {
  const res = await h.fetch(`/api/v2/jobs/${id}/events`, {
    ...init,
    headers: { accept: 'text/event-stream', ...Object.fromEntries(new Headers(init.headers).entries()) },
  });
  return { res, sse: res.status === 200 && res.body ? new SseReader(res.body) : null };
}

/** The events of a list of items, comments left out. */
export const eventsOf = (items: SseItem[]) => items.filter((i): i is Extract<SseItem, { kind: 'event' }> => i.kind === 'event');
