// Streaming multipart/form-data parser over a Web ReadableStream. Written here
// rather than taken from a package because the runtime-neutral parsers on npm
// hand each part over as one buffer; uploads must stream a 100 MB file part
// straight into the hasher and the blob store without ever holding it whole.
//
// Parts come one at a time; a part's body is an async iterable of views into
// the incoming chunks (valid until the next iteration) and must be consumed or
// abandoned before the next part is asked for (the parser drains leftovers).

export class MultipartError extends Error {
  override name = 'MultipartError';
}

/** The body is larger than the caller allowed; nothing more is read. */
export class MultipartLimitError extends MultipartError {
  override name = 'MultipartLimitError';
}

export interface MultipartPart {
  name: string;
  filename: string | null;
  contentType: string | null;
  headers: Map<string, string>;
  body: AsyncIterable<Uint8Array>;
}

export interface MultipartLimits {
  maxParts?: number;
  maxHeaderBytes?: number;
  /** Largest whole body, bytes; past it the parser throws MultipartLimitError. */
  maxBodyBytes?: number;
}

const CR = 13;
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const EMPTY = new Uint8Array(0);
const HEADER_END = encoder.encode('\r\n\r\n');
const findHeaderEnd = searcher(HEADER_END);
const MAX_PADDING = 256;

/** The boundary of a multipart/form-data content type, or null when it is not one. */
export function multipartBoundary(contentType: string | null): string | null {
  if (!contentType) return null;
  const [type, ...params] = contentType.split(';');
  if (type.trim().toLowerCase() !== 'multipart/form-data') return null;
  for (const param of params) {
    const eq = param.indexOf('=');
    if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== 'boundary') continue;
    let value = param.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    return value.length > 0 && value.length <= 70 ? value : null;
  }
  return null;
}

/**
 * Boyer-Moore-Horspool search for one needle. File bytes are arbitrary, so an
 * anchor byte such as CR matches every 256 bytes on average; Horspool instead
 * jumps about a needle's length per step on data that does not contain it.
 */
function searcher(needle: Uint8Array): (hay: Uint8Array, from?: number) => number {
  const last = needle.length - 1;
  const lastByte = needle[last];
  const skip = new Uint8Array(256).fill(needle.length);
  for (let i = 0; i < last; i++) skip[needle[i]] = last - i;
  return (hay, from = 0) => {
    for (let p = from; p + last < hay.length; ) {
      const c = hay[p + last];
      if (c === lastByte) {
        let i = last - 1;
        while (i >= 0 && hay[p + i] === needle[i]) i--;
        if (i < 0) return p;
      }
      p += skip[c];
    }
    return -1;
  };
}

/** Length of the longest suffix of `hay` that is a proper prefix of `needle`. */
function partialSuffix(hay: Uint8Array, needle: Uint8Array): number {
  let p = hay.indexOf(needle[0], Math.max(0, hay.length - needle.length + 1));
  while (p !== -1) {
    let i = 0;
    while (p + i < hay.length && hay[p + i] === needle[i]) i++;
    if (p + i === hay.length) return hay.length - p;
    p = hay.indexOf(needle[0], p + 1);
  }
  return 0;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** Splits a header parameter list (`form-data; name="a"; filename="b"`) into a map. */
export function parseHeaderParams(value: string): Map<string, string> {
  const out = new Map<string, string>();
  const re = /;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g;
  for (const m of value.matchAll(re)) {
    const key = m[1].toLowerCase();
    let v = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3].trim();
    if (key.endsWith('*')) {
      // RFC 5987 extended value: charset'lang'percent-encoded
      const ext = /^[^']*'[^']*'(.*)$/.exec(v);
      try {
        v = decodeURIComponent(ext ? ext[1] : v);
      } catch {
        continue;
      }
      out.set(key.slice(0, -1), v);
    } else if (!out.has(key)) {
      out.set(key, v);
    }
  }
  return out;
}

function parseHeaders(block: Uint8Array): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of decoder.decode(block).split('\r\n')) {
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new MultipartError('malformed part header');
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return headers;
}

export async function* parseMultipart(
  stream: ReadableStream<Uint8Array>,
  boundary: string,
  limits: MultipartLimits = {},
): AsyncGenerator<MultipartPart> {
  const maxParts = limits.maxParts ?? 100;
  const maxHeaderBytes = limits.maxHeaderBytes ?? 16 * 1024;
  const delimiter = encoder.encode(`\r\n--${boundary}`);
  const findDelimiter = searcher(delimiter);
  const reader = stream.getReader();
  // A virtual CRLF lets the first boundary line match the same delimiter as the others.
  let buf: Uint8Array = new Uint8Array([CR, 10]);
  let ended = false;
  let received = 0;
  const maxBodyBytes = limits.maxBodyBytes ?? Infinity;

  async function fill(): Promise<void> {
    if (ended) throw new MultipartError('unexpected end of multipart body');
    let next: { done: boolean; value?: Uint8Array };
    try {
      next = await reader.read();
    } catch (err) {
      // A runtime adapter's own body limit (status 413) is a size refusal, not a parse error.
      if ((err as { status?: unknown } | null)?.status === 413) throw new MultipartLimitError('body over the server limit');
      // The transport failed (client went away): report it as an incomplete body.
      throw new MultipartError(`request body failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    const { value, done } = next;
    if (done || !value) {
      ended = true;
      throw new MultipartError('unexpected end of multipart body');
    }
    received += value.length;
    if (received > maxBodyBytes) throw new MultipartLimitError(`body larger than ${maxBodyBytes} bytes`);
    buf = concat(buf, value);
  }

  /** Reads bytes until the delimiter; the delimiter itself is consumed. */
  async function* untilDelimiter(): AsyncGenerator<Uint8Array> {
    for (;;) {
      const at = findDelimiter(buf);
      if (at >= 0) {
        const chunk = buf.subarray(0, at);
        buf = buf.subarray(at + delimiter.length);
        if (chunk.length > 0) yield chunk;
        return;
      }
      const keep = partialSuffix(buf, delimiter);
      const chunk = buf.subarray(0, buf.length - keep);
      buf = keep > 0 ? buf.slice(buf.length - keep) : EMPTY;
      if (chunk.length > 0) yield chunk;
      await fill();
    }
  }

  async function need(n: number): Promise<void> {
    while (buf.length < n) await fill();
  }

  try {
    for await (const _ of untilDelimiter()) {
      // preamble: ignored
    }
    let parts = 0;
    for (;;) {
      await need(2);
      if (buf[0] === 45 && buf[1] === 45) return; // "--": close delimiter; the epilogue is ignored
      // Transport padding (spaces, tabs) may precede the line break. It is
      // scanned in place and bounded, so a body of padding costs nothing.
      let i = 0;
      for (;;) {
        while (i < buf.length && (buf[i] === 32 || buf[i] === 9)) i++;
        if (i > MAX_PADDING) throw new MultipartError('too much padding after a boundary');
        if (i < buf.length) break;
        await fill();
      }
      await need(i + 2);
      if (buf[i] !== CR || buf[i + 1] !== 10) throw new MultipartError('malformed boundary line');
      buf = buf.subarray(i + 2);

      if (++parts > maxParts) throw new MultipartError(`more than ${maxParts} parts`);
      let end = findHeaderEnd(buf);
      while (end < 0) {
        if (buf.length > maxHeaderBytes) throw new MultipartError('part headers too large');
        await fill();
        end = findHeaderEnd(buf);
      }
      if (end > maxHeaderBytes) throw new MultipartError('part headers too large');
      const headers = parseHeaders(buf.subarray(0, end));
      buf = buf.subarray(end + 4);
      const disposition = headers.get('content-disposition');
      if (!disposition || !/^\s*form-data\s*(;|$)/i.test(disposition)) {
        throw new MultipartError('part without form-data content-disposition');
      }
      const params = parseHeaderParams(disposition);
      const name = params.get('name');
      if (name === undefined) throw new MultipartError('part without a name');

      const body = untilDelimiter();
      let finished = false;
      // next() by hand, so a consumer that stops early does not end the
      // underlying generator: the drain below still reaches the delimiter.
      const tracked: AsyncIterable<Uint8Array> = {
        [Symbol.asyncIterator]: () => ({
          async next() {
            const r = await body.next();
            if (r.done) finished = true;
            return r;
          },
        }),
      };
      yield {
        name,
        filename: params.get('filename') ?? null,
        contentType: headers.get('content-type') ?? null,
        headers,
        body: tracked,
      };
      while (!finished && !(await body.next()).done) {
        // drain what the consumer left unread
      }
    }
  } finally {
    reader.releaseLock();
  }
}

/** Reads a small part as UTF-8 text, refusing more than `max` bytes. */
export async function readPartText(part: MultipartPart, max: number): Promise<string> {
  let out: Uint8Array = EMPTY;
  for await (const chunk of part.body) {
    if (out.length + chunk.length > max) throw new MultipartError(`field "${part.name}" is longer than ${max} bytes`);
    out = concat(out, chunk.slice());
  }
  return decoder.decode(out);
}
