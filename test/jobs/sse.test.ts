// SSE framing and the event stream, read back the way a browser's EventSource
// would: decode the bytes, split lines, parse fields, dispatch on blank lines.
import { describe, expect, it } from 'vitest';
import { ApiError, errorResponse } from '../../core/errors.ts';
import { createSseStream, SSE_HEADERS, sseComment, sseEvent } from '../../core/jobs/sse.ts';
import { createStreamLimiter } from '../../core/jobs/stream-limits.ts';

interface ParsedEvent {
  type: string;
  data: string;
  lastEventId: string;
  retry?: number;
}

/** The HTML spec's event stream interpretation, incrementally over text chunks. */
function createParser() {
  const events: ParsedEvent[] = [];
  const comments: string[] = [];
  let buffer = '';
  let data = '';
  let type = '';
  let lastEventId = '';
  let retry: number | undefined;

  function line(text: string) {
    if (text === '') {
      if (data !== '') {
        events.push({ type: type || 'message', data: data.endsWith('\n') ? data.slice(0, -1) : data, lastEventId, retry });
      }
      data = '';
      type = '';
      retry = undefined;
      return;
    }
    if (text.startsWith(':')) {
      comments.push(text.slice(1).replace(/^ /, ''));
      return;
    }
    const colon = text.indexOf(':');
    const name = colon === -1 ? text : text.slice(0, colon);
    const value = colon === -1 ? '' : text.slice(colon + 1).replace(/^ /, '');
    if (name === 'event') type = value;
    else if (name === 'data') data += `${value}\n`;
    else if (name === 'id') {
      if (!value.includes('\0')) lastEventId = value;
    } else if (name === 'retry') {
      if (/^\d+$/.test(value)) retry = Number(value);
    }
  }

  return {
    events,
    comments,
    push(chunk: string) {
      buffer += chunk;
      for (;;) {
        const m = /\r\n|\r|\n/.exec(buffer);
        // A trailing CR might be the first half of a CRLF split across chunks.
        if (!m || (m[0] === '\r' && m.index === buffer.length - 1)) break;
        line(buffer.slice(0, m.index));
        buffer = buffer.slice(m.index + m[0].length);
      }
    },
  };
}

function parse(text: string) {
  const p = createParser();
  p.push(text);
  return p;
}

/** Reads a byte stream as a client would, until `until` holds or the stream ends. */
async function readStream(
  stream: ReadableStream<Uint8Array>,
  until: (p: ReturnType<typeof createParser>) => boolean = () => false,
  timeoutMs = 2000,
) {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  const parser = createParser();
  const deadline = Date.now() + timeoutMs;
  let done = false;
  while (!until(parser)) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error('timed out reading the stream');
    const chunk = await Promise.race([
      reader.read(),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timed out reading the stream')), left)),
    ]);
    if (chunk.done) {
      done = true;
      break;
    }
    parser.push(decoder.decode(chunk.value, { stream: true }));
  }
  return { ...parser, done, reader };
}

describe('sseEvent', () => {
  it('writes event and JSON data, ended by a blank line', () => {
    const frame = sseEvent({ event: 'progress', data: { value: 0.5, message: 'KSampler 21/50' } });
    expect(frame).toBe('event: progress\ndata: {"value":0.5,"message":"KSampler 21/50"}\n\n');
    expect(parse(frame).events).toEqual([{ type: 'progress', data: '{"value":0.5,"message":"KSampler 21/50"}', lastEventId: '', retry: undefined }]);
  });

  it('round-trips JSON with line breaks inside strings on one data line', () => {
    const data = { message: 'line one\nline two\r\nthree\rfour', u: '\u2028' };
    const frame = sseEvent({ event: 'log', data });
    expect(frame.split('\n').filter((l) => l.startsWith('data:'))).toHaveLength(1);
    expect(JSON.parse(parse(frame).events[0].data)).toEqual(data);
  });

  it('splits multi-line text into several data lines', () => {
    const frame = sseEvent({ text: 'a\nb\r\nc\rd' });
    expect(frame).toBe('data: a\ndata: b\ndata: c\ndata: d\n\n');
    expect(parse(frame).events[0]).toMatchObject({ type: 'message', data: 'a\nb\nc\nd' });
  });

  it('keeps leading spaces and colons of data intact', () => {
    const frame = sseEvent({ text: ' x: y' });
    expect(parse(frame).events[0].data).toBe(' x: y');
  });

  it('writes id and retry', () => {
    const frame = sseEvent({ event: 'status', id: '42', retry: 3000, data: { status: 'queued' } });
    expect(parse(frame).events[0]).toEqual({ type: 'status', data: '{"status":"queued"}', lastEventId: '42', retry: 3000 });
  });

  it('refuses CR/LF injection through event and id', () => {
    expect(() => sseEvent({ event: 'status\ndata: forged', data: 1 })).toThrow(TypeError);
    expect(() => sseEvent({ event: 'a\rb', data: 1 })).toThrow(TypeError);
    expect(() => sseEvent({ id: '1\n\nevent: x', data: 1 })).toThrow(TypeError);
    expect(() => sseEvent({ id: 'a\0b', data: 1 })).toThrow(TypeError);
    expect(() => sseEvent({ event: '', data: 1 })).toThrow(TypeError);
  });

  it('refuses a bad retry and non-JSON data', () => {
    expect(() => sseEvent({ retry: -1, data: 1 })).toThrow(TypeError);
    expect(() => sseEvent({ retry: 1.5, data: 1 })).toThrow(TypeError);
    expect(() => sseEvent({ data: undefined })).toThrow(TypeError);
  });
});

describe('sseComment', () => {
  it('writes a comment frame that dispatches no event', () => {
    expect(sseComment('keepalive')).toBe(': keepalive\n\n');
    expect(sseComment()).toBe(':\n\n');
    const p = parse(sseComment('two\nlines'));
    expect(p.events).toEqual([]);
    expect(p.comments).toEqual(['two', 'lines']);
  });
});

describe('createSseStream', () => {
  it('exports the response headers an SSE response needs', () => {
    expect(SSE_HEADERS['content-type']).toMatch(/^text\/event-stream/);
    expect(SSE_HEADERS['cache-control']).toContain('no-cache');
  });

  it('delivers sent events in order and ends on close', async () => {
    const sse = createSseStream({ keepaliveMs: 0 });
    sse.send({ event: 'status', data: { status: 'running' } });
    sse.send({ event: 'progress', data: { value: 0.25 } });
    sse.send(sseEvent({ event: 'status', data: { status: 'succeeded' } }));
    sse.close();
    expect(sse.closed).toBe(true);
    expect(sse.send({ event: 'late', data: 1 })).toBe(false);
    const read = await readStream(sse.stream);
    expect(read.done).toBe(true);
    expect(read.events.map((e) => [e.type, JSON.parse(e.data)])).toEqual([
      ['status', { status: 'running' }],
      ['progress', { value: 0.25 }],
      ['status', { status: 'succeeded' }],
    ]);
  });

  it('carries multi-byte text intact through a Response', async () => {
    const sse = createSseStream({ keepaliveMs: 0 });
    sse.send({ event: 'log', data: { message: 'ünïcødé ✓ 🎨' } });
    sse.close();
    const text = await new Response(sse.stream, { headers: SSE_HEADERS }).text();
    expect(JSON.parse(parse(text).events[0].data)).toEqual({ message: 'ünïcødé ✓ 🎨' });
  });

  it('sends keepalive comments every keepaliveMs', async () => {
    const sse = createSseStream({ keepaliveMs: 15 });
    const read = await readStream(sse.stream, (p) => p.comments.length >= 3);
    expect(read.comments.slice(0, 3)).toEqual(['keepalive', 'keepalive', 'keepalive']);
    expect(read.events).toEqual([]);
    sse.close();
    read.reader.releaseLock();
  });

  it('closes when the signal aborts, and tells onCancel', async () => {
    const ac = new AbortController();
    const cancels: unknown[] = [];
    const sse = createSseStream({ signal: ac.signal, keepaliveMs: 10, onCancel: (r) => cancels.push(r) });
    sse.send({ event: 'status', data: { status: 'queued' } });
    const reading = readStream(sse.stream);
    ac.abort(new Error('client gone'));
    const read = await reading;
    expect(read.done).toBe(true);
    expect(read.events[0].type).toBe('status');
    expect(sse.closed).toBe(true);
    expect(cancels).toHaveLength(1);
    expect((cancels[0] as Error).message).toBe('client gone');
    expect(sse.send({ event: 'x', data: 1 })).toBe(false);
  });

  it('an already aborted signal yields a closed stream', async () => {
    const cancels: unknown[] = [];
    const sse = createSseStream({ signal: AbortSignal.abort(), onCancel: (r) => cancels.push(r) });
    const read = await readStream(sse.stream);
    expect(read.done).toBe(true);
    expect(cancels).toHaveLength(1);
  });

  it('calls onCancel once when the reader cancels, and stops keepalives', async () => {
    const cancels: unknown[] = [];
    const sse = createSseStream({ keepaliveMs: 5, onCancel: (r) => cancels.push(r) });
    const reader = sse.stream.getReader();
    await reader.read();
    await reader.cancel('bye');
    expect(cancels).toEqual(['bye']);
    expect(sse.closed).toBe(true);
    expect(sse.send({ event: 'x', data: 1 })).toBe(false);
    sse.close();
    await new Promise((r) => setTimeout(r, 20));
    expect(cancels).toEqual(['bye']);
  });

  it('close() does not call onCancel', async () => {
    const cancels: unknown[] = [];
    const ac = new AbortController();
    const sse = createSseStream({ signal: ac.signal, keepaliveMs: 0, onCancel: (r) => cancels.push(r) });
    sse.close();
    ac.abort();
    await readStream(sse.stream);
    expect(cancels).toEqual([]);
  });

  it('queues everything for a slow reader and reports backpressure', async () => {
    const sse = createSseStream({ keepaliveMs: 0, highWaterMark: 256 });
    const results: boolean[] = [];
    for (let i = 0; i < 50; i++) results.push(sse.send({ event: 'progress', data: { i } }));
    expect(results[0]).toBe(true);
    expect(results.at(-1)).toBe(false);
    expect(sse.buffered).toBeGreaterThan(256);
    let drained = false;
    const waiting = sse.drained().then(() => (drained = true));
    await Promise.resolve();
    expect(drained).toBe(false);
    const read = await readStream(sse.stream, (p) => p.events.length === 50);
    await waiting;
    expect(drained).toBe(true);
    expect(read.events.map((e) => JSON.parse(e.data).i)).toEqual([...Array(50).keys()]);
    expect(sse.buffered).toBe(0);
    sse.close();
  });

  it('skips keepalives while the reader is behind', async () => {
    const sse = createSseStream({ keepaliveMs: 5, highWaterMark: 1 << 20 });
    sse.send({ event: 'status', data: { status: 'running' } });
    const before = sse.buffered;
    await new Promise((r) => setTimeout(r, 40));
    expect(sse.buffered).toBe(before);
    sse.close();
    const read = await readStream(sse.stream);
    expect(read.comments).toEqual([]);
    expect(read.events).toHaveLength(1);
  });
});

describe('createSseStream attached to a sink', () => {
  /** A sink as an adapter's socket would be: it keeps what it is given until `flush`. */
  function sink() {
    const chunks: Uint8Array[] = [];
    let held = 0;
    let ends = 0;
    const decoder = new TextDecoder();
    return {
      write(chunk: Uint8Array) {
        chunks.push(chunk);
        held += chunk.byteLength;
      },
      buffered: () => held,
      end: () => void ends++,
      flush: () => void (held = 0),
      text: () => chunks.map((c) => decoder.decode(c)).join(''),
      get ends() {
        return ends;
      },
    };
  }

  it('hands the frames sent before it attached, then each new one, in order, and ends once on close', () => {
    const sse = createSseStream({ keepaliveMs: 0 });
    sse.send({ event: 'status', data: { status: 'running' } });
    const s = sink();
    sse.attach(s);
    sse.send({ event: 'log', data: { message: 'ünïcødé ✓ 🎨' } });
    sse.close();
    sse.close();
    expect(parse(s.text()).events.map((e) => [e.type, JSON.parse(e.data)])).toEqual([
      ['status', { status: 'running' }],
      ['log', { message: 'ünïcødé ✓ 🎨' }],
    ]);
    expect(s.ends).toBe(1);
    expect(sse.send({ event: 'late', data: 1 })).toBe(false);
  });

  it('a stream closed before it attached hands over what it had, then ends', () => {
    const sse = createSseStream({ keepaliveMs: 0 });
    sse.send({ event: 'status', data: { status: 'succeeded' } });
    sse.close();
    const s = sink();
    sse.attach(s);
    expect(parse(s.text()).events.map((e) => e.type)).toEqual(['status']);
    expect(s.ends).toBe(1);
  });

  it('is read one way only: no Web stream once attached, no second sink, no sink once read', () => {
    const attached = createSseStream({ keepaliveMs: 0 });
    attached.attach(sink());
    expect(() => attached.stream).toThrow(TypeError);
    expect(() => attached.attach(sink())).toThrow(TypeError);
    const read = createSseStream({ keepaliveMs: 0 });
    expect(read.stream).toBe(read.stream);
    expect(() => read.attach(sink())).toThrow(TypeError);
  });

  it('reports backpressure from what the sink keeps, and drained() resolves when the sink says it sent it', async () => {
    const sse = createSseStream({ keepaliveMs: 0, highWaterMark: 256 });
    const s = sink();
    const attachment = sse.attach(s);
    const results: boolean[] = [];
    for (let i = 0; i < 20; i++) results.push(sse.send({ event: 'progress', data: { i } }));
    expect(results[0]).toBe(true);
    expect(results.at(-1)).toBe(false);
    expect(sse.buffered).toBe(s.buffered());
    let drained = false;
    const waiting = sse.drained().then(() => (drained = true));
    await Promise.resolve();
    expect(drained).toBe(false);
    s.flush();
    attachment.drained();
    await waiting;
    expect(sse.buffered).toBe(0);
    expect(parse(s.text()).events.map((e) => JSON.parse(e.data).i)).toEqual([...Array(20).keys()]);
  });

  it('a canceled attachment tells onCancel once and stops the stream; a close after it does not end the sink', async () => {
    const cancels: unknown[] = [];
    const sse = createSseStream({ keepaliveMs: 5, onCancel: (r) => cancels.push(r) });
    const s = sink();
    const attachment = sse.attach(s);
    attachment.cancel('gone');
    attachment.cancel('again');
    expect(cancels).toEqual(['gone']);
    expect(sse.closed).toBe(true);
    expect(sse.send({ event: 'x', data: 1 })).toBe(false);
    sse.close();
    await new Promise((r) => setTimeout(r, 20));
    expect(s.text()).toBe('');
    expect(s.ends).toBe(0);
  });

  it('the signal aborting ends the sink and tells onCancel', () => {
    const ac = new AbortController();
    const cancels: unknown[] = [];
    const sse = createSseStream({ signal: ac.signal, keepaliveMs: 0, onCancel: (r) => cancels.push(r) });
    const s = sink();
    sse.attach(s);
    ac.abort(new Error('client gone'));
    expect(s.ends).toBe(1);
    expect((cancels[0] as Error).message).toBe('client gone');
  });

  it('sends keepalives to the sink only while it keeps nothing', async () => {
    const sse = createSseStream({ keepaliveMs: 5 });
    const s = sink();
    sse.attach(s);
    const comments = async (n: number) => {
      while (parse(s.text()).comments.length < n) await new Promise((r) => setTimeout(r, 5));
    };
    await comments(1);
    s.flush();
    await comments(2);
    s.flush();
    sse.send({ event: 'status', data: { status: 'running' } });
    const kept = s.text();
    await new Promise((r) => setTimeout(r, 30));
    expect(s.text()).toBe(kept);
    sse.close();
  });
});

describe('createStreamLimiter', () => {
  it('caps open streams per account and frees a slot on release', () => {
    const limiter = createStreamLimiter(2);
    const a1 = limiter.acquire('a');
    limiter.acquire('a');
    limiter.acquire('b');
    expect(limiter.count('a')).toBe(2);
    expect(() => limiter.acquire('a')).toThrow(ApiError);
    a1();
    a1(); // idempotent
    expect(limiter.count('a')).toBe(1);
    expect(() => limiter.acquire('a')).not.toThrow();
  });

  it('refuses with a 429 carrying too_many_streams and Retry-After', async () => {
    const limiter = createStreamLimiter(1, { retryAfterSeconds: 7 });
    limiter.acquire('a');
    let err: unknown;
    try {
      limiter.acquire('a');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    const res = errorResponse(err as ApiError);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('7');
    const body = (await res.json()) as { error: { code: string; details: Record<string, unknown> } };
    expect(body.error.code).toBe('too_many_streams');
    expect(body.error.details).toMatchObject({ limit: 1 });
  });

  it('forgets accounts with no open streams and validates max', () => {
    const limiter = createStreamLimiter(1);
    const release = limiter.acquire('a');
    release();
    expect(limiter.count('a')).toBe(0);
    expect(() => createStreamLimiter(0)).toThrow(RangeError);
    expect(() => createStreamLimiter(1.5)).toThrow(RangeError);
    expect(() => createStreamLimiter(Infinity).acquire('a')).not.toThrow();
  });
});
