// Server-Sent Events on the wire (HTML Living Standard, "Server-sent events"):
// frame encoding, keepalive comments, and a byte stream a Response can carry.
// The v2 job stream is live push only, so nothing here replays or resumes.
import { stringifyJson } from '../../lib/json.ts';

export interface SseFields {
  /** The event type; absent means the client's default `message`. */
  event?: string;
  id?: string;
  /** Reconnection time in milliseconds. */
  retry?: number;
}

/** `data` is sent JSON-stringified; `text` is sent as is, one `data:` line per line. */
export type SseMessage = SseFields & ({ data: unknown; text?: never } | { text: string; data?: never });

/** Headers for a response carrying an SSE stream (no caching, no proxy buffering). */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};

const LINE_BREAK = /\r\n|\r|\n/;

function field(name: string, value: string): string {
  // A CR or LF would end the field early and let the rest forge new fields or events.
  if (/[\r\n]/.test(value)) throw new TypeError(`SSE ${name} must not contain CR or LF`);
  return `${name}: ${value}\n`;
}

/** One event frame, ending in the blank line that dispatches it. */
export function sseEvent(message: SseMessage): string {
  let out = '';
  if (message.event !== undefined) {
    if (message.event === '') throw new TypeError('SSE event type must not be empty');
    out += field('event', message.event);
  }
  if (message.id !== undefined) {
    // Clients ignore an id containing NUL, which would silently keep the old one.
    if (message.id.includes('\0')) throw new TypeError('SSE id must not contain NUL');
    out += field('id', message.id);
  }
  if (message.retry !== undefined) {
    if (!Number.isInteger(message.retry) || message.retry < 0) {
      throw new TypeError('SSE retry must be a non-negative integer');
    }
    out += `retry: ${message.retry}\n`;
  }
  let payload: string;
  if (message.text !== undefined) {
    payload = message.text;
  } else {
    const json = stringifyJson(message.data);
    if (json === undefined) throw new TypeError('SSE data is not JSON-serialisable');
    payload = json;
  }
  for (const line of payload.split(LINE_BREAK)) out += `data: ${line}\n`;
  return `${out}\n`;
}

/** A comment frame: clients ignore it, proxies see traffic (keepalive). */
export function sseComment(text = ''): string {
  return `${text
    .split(LINE_BREAK)
    .map((line) => (line === '' ? ':\n' : `: ${line}\n`))
    .join('')}\n`;
}

export interface SseStreamOptions {
  /** Closes the stream when aborted (typically the request's signal). */
  signal?: AbortSignal;
  /** Interval of keepalive comments; 0 disables them. */
  keepaliveMs?: number;
  /** Called once when the stream ends without `close()`: the reader canceled or `signal` aborted. */
  onCancel?: (reason: unknown) => void;
  /** Bytes queued before `send` reports backpressure. */
  highWaterMark?: number;
}

/** Where an adapter that writes the bytes itself takes a stream's frames (`SseSource.attach`). */
export interface SseSink {
  /** One frame's bytes, in order; the sink keeps what it cannot send yet. */
  write(chunk: Uint8Array): void;
  /** Bytes written to the sink and not yet sent on. */
  buffered(): number;
  /** The stream ended: no more frames. */
  end(): void;
}

/** What the adapter tells an attached stream. */
export interface SseAttachment {
  /** The sink sent on what it kept: a producer waiting in `drained()` may go on. */
  drained(): void;
  /** The client went away before the stream ended. */
  cancel(reason?: unknown): void;
}

/**
 * An SSE stream as a response body: read as a Web stream (`stream`), or, by
 * an adapter that writes to its socket itself, attached to a sink, which
 * spares the Web stream and its reader (`FetchOptions.eventStreamResponse`).
 * One way or the other, once; frames sent before either wait for it.
 */
export interface SseSource {
  readonly stream: ReadableStream<Uint8Array>;
  attach(sink: SseSink): SseAttachment;
}

export interface SseStream extends SseSource {
  /**
   * Queues one event (or a pre-encoded frame). Nothing is ever dropped; returns
   * false when the reader is behind (queue above the high-water mark) or the
   * stream is closed, so a producer can wait for `drained()` before sending more.
   */
  send(event: SseMessage | string): boolean;
  /** Resolves when the queue is below the high-water mark again, or the stream closed. */
  drained(): Promise<void>;
  /** Ends the stream after what is queued has been read. Idempotent. */
  close(): void;
  readonly closed: boolean;
  /** Bytes queued and not yet read. */
  readonly buffered: number;
}

export function createSseStream(options: SseStreamOptions = {}): SseStream {
  const { signal, keepaliveMs = 15_000, onCancel, highWaterMark = 64 * 1024 } = options;
  const encoder = new TextEncoder();
  // Until a reader or a sink takes them, frames wait here.
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  let stream: ReadableStream<Uint8Array> | undefined;
  let sink: SseSink | undefined;
  let closed = false;
  let keepalive: ReturnType<typeof setInterval> | null = null;
  let waiters: Array<() => void> = [];

  const buffered = () => {
    if (controller) return Math.max(0, highWaterMark - (controller.desiredSize ?? 0));
    return sink ? sink.buffered() : pendingBytes;
  };
  const below = () => closed || buffered() < highWaterMark;

  function wake() {
    const ready = waiters;
    waiters = [];
    for (const resolve of ready) resolve();
  }

  function teardown() {
    closed = true;
    if (keepalive !== null) clearInterval(keepalive);
    keepalive = null;
    signal?.removeEventListener('abort', onAbort);
    wake();
  }

  /** The reader or the sink went away before the end. */
  function canceled(reason: unknown) {
    if (closed) return;
    teardown();
    onCancel?.(reason);
  }

  function end(reason: unknown, byPeer: boolean) {
    if (closed) return;
    teardown();
    try {
      controller?.close();
    } catch {
      // Already closed or errored by the reader's side.
    }
    sink?.end();
    if (byPeer) onCancel?.(reason);
  }

  function onAbort() {
    end(signal?.reason, true);
  }

  /** The frames that waited for a reader or a sink, handed over once. */
  function takePending(): Uint8Array[] {
    if (stream || sink) throw new TypeError('An SSE stream is read once: as a Web stream or through one sink.');
    const frames = pending;
    pending = [];
    pendingBytes = 0;
    return frames;
  }

  function webStream(): ReadableStream<Uint8Array> {
    if (stream) return stream;
    const frames = takePending();
    stream = new ReadableStream<Uint8Array>(
      {
        start(c) {
          controller = c;
          for (const frame of frames) c.enqueue(frame);
          if (closed) c.close();
        },
        pull() {
          wake();
        },
        cancel: canceled,
      },
      { highWaterMark, size: (chunk) => chunk.byteLength },
    );
    return stream;
  }

  function enqueue(frame: string): boolean {
    if (closed) return false;
    const bytes = encoder.encode(frame);
    if (controller) controller.enqueue(bytes);
    else if (sink) sink.write(bytes);
    else {
      pending.push(bytes);
      pendingBytes += bytes.byteLength;
    }
    return below();
  }

  if (signal?.aborted) {
    // Let the caller finish wiring (it may not hold the result yet) before onCancel runs.
    queueMicrotask(onAbort);
  } else {
    signal?.addEventListener('abort', onAbort, { once: true });
    if (keepaliveMs > 0) {
      keepalive = setInterval(() => {
        // A reader that is behind has bytes to read already; a comment would only add to them.
        if (buffered() === 0) enqueue(sseComment('keepalive'));
      }, keepaliveMs);
    }
  }

  return {
    get stream() {
      return webStream();
    },
    attach(to) {
      const frames = takePending();
      sink = to;
      for (const frame of frames) to.write(frame);
      if (closed) to.end();
      return { drained: wake, cancel: canceled };
    },
    send: (event) => enqueue(typeof event === 'string' ? event : sseEvent(event)),
    drained: () => (below() ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
    close: () => end(undefined, false),
    get closed() {
      return closed;
    },
    get buffered() {
      return closed ? 0 : buffered();
    },
  };
}
