// The streaming multipart parser against hand-built bodies cut at every kind
// of chunk boundary, including delimiters split across chunks.
import { describe, expect, it } from 'vitest';
import { MultipartError, MultipartLimitError, multipartBoundary, parseHeaderParams, parseMultipart, readPartText } from '../core/http/multipart.ts';

const enc = new TextEncoder();
const B = 'XyZ-boundary-123';

function body(
  parts: Array<{ headers: string; data: Uint8Array | string }>,
  opts: { preamble?: string; epilogue?: string; close?: boolean } = {},
): Uint8Array {
  const chunks: Uint8Array[] = [enc.encode(opts.preamble ?? '')];
  for (const p of parts) {
    chunks.push(enc.encode(`--${B}\r\n${p.headers}\r\n\r\n`));
    chunks.push(typeof p.data === 'string' ? enc.encode(p.data) : p.data);
    chunks.push(enc.encode('\r\n'));
  }
  if (opts.close !== false) chunks.push(enc.encode(`--${B}--\r\n${opts.epilogue ?? ''}`));
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) out.set(c, at), (at += c.length);
  return out;
}

function streamOf(bytes: Uint8Array, cuts: number[]): ReadableStream<Uint8Array> {
  const pieces: Uint8Array[] = [];
  let prev = 0;
  for (const cut of [...cuts.filter((c) => c > 0 && c < bytes.length)].sort((a, b) => a - b).concat(bytes.length)) {
    pieces.push(bytes.slice(prev, cut));
    prev = cut;
  }
  return new ReadableStream({
    pull(c) {
      const next = pieces.shift();
      if (next) c.enqueue(next);
      else c.close();
    },
  });
}

async function collect(stream: ReadableStream<Uint8Array>, boundary = B) {
  const out: Array<{ name: string; filename: string | null; type: string | null; data: Uint8Array }> = [];
  for await (const part of parseMultipart(stream, boundary)) {
    const chunks: Uint8Array[] = [];
    for await (const c of part.body) chunks.push(c.slice());
    const data = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const c of chunks) data.set(c, at), (at += c.length);
    out.push({ name: part.name, filename: part.filename, type: part.contentType, data });
  }
  return out;
}

const tricky = enc.encode(`a\r\nb\r\n--${B.slice(0, 5)}\r\n--X\r\r\n-\r\n--${B}x`.replace(`--${B}x`, `--${B.slice(0, -1)}`));

describe('multipart parser', () => {
  const raw = body(
    [
      { headers: 'Content-Disposition: form-data; name="content_type"', data: 'image/png' },
      { headers: 'Content-Disposition: form-data; name="file"; filename="a b.png"\r\nContent-Type: image/png', data: tricky },
      { headers: 'Content-Disposition: form-data; name="empty"', data: '' },
    ],
    { preamble: 'ignored preamble\r\n', epilogue: 'ignored epilogue' },
  );

  it('parses fields and files with delimiter-like bytes inside, whole', async () => {
    const parts = await collect(streamOf(raw, []));
    expect(parts.map((p) => p.name)).toEqual(['content_type', 'file', 'empty']);
    expect(new TextDecoder().decode(parts[0].data)).toBe('image/png');
    expect(parts[1].filename).toBe('a b.png');
    expect(parts[1].type).toBe('image/png');
    expect(parts[1].data).toEqual(tricky);
    expect(parts[2].data.length).toBe(0);
  });

  it('gives the same result for every single split point and for 1-byte chunks', async () => {
    const expected = await collect(streamOf(raw, []));
    for (let cut = 1; cut < raw.length; cut++) {
      expect(await collect(streamOf(raw, [cut]))).toEqual(expected);
    }
    const everyByte = Array.from({ length: raw.length }, (_, i) => i);
    expect(await collect(streamOf(raw, everyByte))).toEqual(expected);
  });

  it('streams large parts in pieces without joining them', async () => {
    const big = new Uint8Array(3 * 1024 * 1024).map((_, i) => (i * 7919) % 251);
    const bytes = body([{ headers: 'Content-Disposition: form-data; name="file"; filename="x"', data: big }]);
    const cuts = Array.from({ length: 50 }, (_, i) => (i + 1) * 65536);
    let pieces = 0;
    let size = 0;
    for await (const part of parseMultipart(streamOf(bytes, cuts), B)) {
      for await (const c of part.body) pieces++, (size += c.length);
    }
    expect(size).toBe(big.length);
    expect(pieces).toBeGreaterThan(40);
  });

  it('drains a part the consumer abandons', async () => {
    const names: string[] = [];
    for await (const part of parseMultipart(streamOf(raw, [10, 100, 150]), B)) {
      names.push(part.name);
      if (part.name === 'file') for await (const _ of part.body) break;
    }
    expect(names).toEqual(['content_type', 'file', 'empty']);
  });

  it('accepts transport padding after a boundary', async () => {
    const text = `--${B}  \r\nContent-Disposition: form-data; name="a"\r\n\r\nv\r\n--${B}--`;
    const parts = await collect(streamOf(enc.encode(text), []));
    expect(parts.map((p) => p.name)).toEqual(['a']);
  });

  it.each([
    ['no closing boundary', body([{ headers: 'Content-Disposition: form-data; name="a"', data: 'x' }], { close: false })],
    ['no boundary at all', enc.encode('just some bytes')],
    ['garbage after boundary', enc.encode(`--${B}garbage\r\n`)],
    ['part without disposition', enc.encode(`--${B}\r\nContent-Type: text/plain\r\n\r\nx\r\n--${B}--`)],
    ['part without a name', enc.encode(`--${B}\r\nContent-Disposition: form-data\r\n\r\nx\r\n--${B}--`)],
    ['malformed header line', enc.encode(`--${B}\r\nno colon here\r\n\r\nx\r\n--${B}--`)],
  ])('rejects %s with MultipartError', async (_, bytes) => {
    await expect(collect(streamOf(bytes, [3]))).rejects.toBeInstanceOf(MultipartError);
  });

  it('refuses unbounded padding after a boundary, quickly', async () => {
    const padded = new Uint8Array(8 * 1024 * 1024).fill(32);
    padded.set(enc.encode(`--${B}`), 0);
    const cuts = Array.from({ length: 127 }, (_, i) => (i + 1) * 65536);
    await expect(collect(streamOf(padded, cuts))).rejects.toThrow(/too much padding/);
  });

  it('reports an adapter size refusal (status 413) as MultipartLimitError', async () => {
    const refused = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(raw.slice(0, 50));
        c.error(Object.assign(new Error('too large'), { status: 413 }));
      },
    });
    await expect(collect(refused)).rejects.toBeInstanceOf(MultipartLimitError);
  });

  it('refuses oversized headers and bodies', async () => {
    const huge = enc.encode(`--${B}\r\nX-Big: ${'a'.repeat(20000)}\r\n\r\n`);
    await expect(collect(streamOf(huge, [1000]))).rejects.toThrow(/headers too large/);
    const parts = parseMultipart(streamOf(raw, [5]), B, { maxBodyBytes: 20 });
    await expect(
      (async () => {
        for await (const p of parts) for await (const _ of p.body);
      })(),
    ).rejects.toBeInstanceOf(MultipartLimitError);
  });

  it('reports a failing transport as MultipartError', async () => {
    const failing = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(raw.slice(0, 120));
        c.error(new Error('socket closed'));
      },
    });
    await expect(collect(failing)).rejects.toThrow(/request body failed: socket closed/);
  });

  it('caps text fields', async () => {
    for await (const part of parseMultipart(streamOf(raw, []), B)) {
      if (part.name === 'content_type') await expect(readPartText(part, 3)).rejects.toThrow(/longer than 3/);
      else for await (const _ of part.body);
    }
  });
});

describe('multipart headers', () => {
  it('reads the boundary from the content type', () => {
    expect(multipartBoundary(`multipart/form-data; boundary=${B}`)).toBe(B);
    expect(multipartBoundary('Multipart/Form-Data; charset=utf-8; boundary="a b"')).toBe('a b');
    expect(multipartBoundary('application/json')).toBeNull();
    expect(multipartBoundary('multipart/form-data')).toBeNull();
    expect(multipartBoundary(`multipart/form-data; boundary=${'x'.repeat(71)}`)).toBeNull();
    expect(multipartBoundary(null)).toBeNull();
  });

  it('parses quoted, escaped and extended parameters', () => {
    const p = parseHeaderParams(`form-data; name="fi\\"le"; filename="x.png"; filename*=UTF-8''%C3%A9t%C3%A9.png`);
    expect(p.get('name')).toBe('fi"le');
    expect(p.get('filename')).toBe('été.png');
    expect(parseHeaderParams('form-data; name=plain').get('name')).toBe('plain');
  });
});
