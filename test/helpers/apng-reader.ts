// An APNG reader for tests, written apart from the engine's codec (Node's
// zlib for inflate and CRC, its own unfiltering) so a wrong writer cannot be
// confirmed by its own mirror image: chunk order, CRCs, sequence numbers,
// frame control and the pixels of every frame (8-bit RGB only).
import { crc32, inflateSync } from 'node:zlib';

export interface ApngFrame {
  width: number;
  height: number;
  x: number;
  y: number;
  delayMs: number;
  dispose: number;
  blend: number;
  /** width * height * 3 bytes. */
  rgb: Uint8Array;
}

export interface Apng {
  width: number;
  height: number;
  plays: number;
  frames: ApngFrame[];
  durationMs: number;
}

function unfilter(raw: Uint8Array, width: number, height: number): Uint8Array {
  const stride = width * 3;
  if (raw.length !== height * (stride + 1)) throw new Error(`frame data is ${raw.length} bytes, expected ${height * (stride + 1)}`);
  const out = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const type = raw[y * (stride + 1)];
    for (let i = 0; i < stride; i++) {
      const x = raw[y * (stride + 1) + 1 + i];
      const a = i >= 3 ? out[y * stride + i - 3] : 0;
      const b = y > 0 ? out[(y - 1) * stride + i] : 0;
      const c = i >= 3 && y > 0 ? out[(y - 1) * stride + i - 3] : 0;
      let p: number;
      if (type === 0) p = 0;
      else if (type === 1) p = a;
      else if (type === 2) p = b;
      else if (type === 3) p = (a + b) >> 1;
      else if (type === 4) {
        const e = a + b - c;
        const pa = Math.abs(e - a);
        const pb = Math.abs(e - b);
        const pc = Math.abs(e - c);
        p = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      } else throw new Error(`filter type ${type} on row ${y}`);
      out[y * stride + i] = (x + p) & 0xff;
    }
  }
  return out;
}

export function readApng(bytes: Uint8Array): Apng {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (!buf.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) throw new Error('no PNG signature');
  const chunks: Array<{ type: string; data: Buffer }> = [];
  for (let at = 8; at < buf.length; ) {
    const length = buf.readUInt32BE(at);
    const type = buf.toString('latin1', at + 4, at + 8);
    const data = buf.subarray(at + 8, at + 8 + length);
    if (crc32(buf.subarray(at + 4, at + 8 + length)) >>> 0 !== buf.readUInt32BE(at + 8 + length)) throw new Error(`CRC of ${type}`);
    chunks.push({ type, data });
    at += 12 + length;
  }
  if (chunks[0]?.type !== 'IHDR') throw new Error('IHDR is not first');
  if (chunks.at(-1)?.type !== 'IEND') throw new Error('IEND is not last');
  const ihdr = chunks[0].data;
  const width = ihdr.readUInt32BE(0);
  const height = ihdr.readUInt32BE(4);
  if (ihdr[8] !== 8 || ihdr[9] !== 2 || ihdr[12] !== 0) throw new Error('not 8-bit non-interlaced RGB');
  const actlAt = chunks.findIndex((c) => c.type === 'acTL');
  const idatAt = chunks.findIndex((c) => c.type === 'IDAT');
  if (actlAt < 0 || actlAt > idatAt) throw new Error('acTL missing or after IDAT');
  const declared = chunks[actlAt].data.readUInt32BE(0);
  const plays = chunks[actlAt].data.readUInt32BE(4);

  const frames: ApngFrame[] = [];
  let seq = 0;
  let current: { ctl: Omit<ApngFrame, 'rgb'>; data: Buffer[] } | null = null;
  const close = () => {
    if (!current) return;
    const raw = inflateSync(Buffer.concat(current.data));
    frames.push({ ...current.ctl, rgb: unfilter(raw, current.ctl.width, current.ctl.height) });
    current = null;
  };
  for (const { type, data } of chunks) {
    if (type === 'fcTL') {
      close();
      if (data.readUInt32BE(0) !== seq++) throw new Error('fcTL sequence number out of order');
      const den = data.readUInt16BE(22) || 100;
      current = {
        ctl: {
          width: data.readUInt32BE(4),
          height: data.readUInt32BE(8),
          x: data.readUInt32BE(12),
          y: data.readUInt32BE(16),
          delayMs: (data.readUInt16BE(20) * 1000) / den,
          dispose: data[24],
          blend: data[25],
        },
        data: [],
      };
    } else if (type === 'IDAT') {
      if (!current || frames.length > 0) throw new Error('IDAT outside the first frame');
      current.data.push(data);
    } else if (type === 'fdAT') {
      if (!current) throw new Error('fdAT without a frame');
      if (data.readUInt32BE(0) !== seq++) throw new Error('fdAT sequence number out of order');
      current.data.push(data.subarray(4));
    }
  }
  close();
  if (frames.length !== declared) throw new Error(`acTL says ${declared} frames, found ${frames.length}`);
  return { width, height, plays, frames, durationMs: frames.reduce((n, f) => n + f.delayMs, 0) };
}
