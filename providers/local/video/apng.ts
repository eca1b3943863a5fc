// Animated PNG writer: the container of the local video generator.
//
// Why APNG: browsers (image/apng), ffmpeg and most image viewers play it, it
// is lossless, and it is PNG chunks around zlib data, which Web APIs alone
// can write (CompressionStream's "deflate" is exactly PNG's zlib stream).
// An MJPEG AVI would need a JPEG encoder and MP4/WebM a video codec, neither
// of which exists here without native code. Each frame carries its own
// delay, so a held key frame is one frame however long it lasts.
//
// Compression goes through CompressionStream rather than the still encoder's
// fflate: runtimes run it natively and off the JavaScript thread, so a
// render of large frames neither takes seconds per frame nor stalls the API.
import { PNG_SIGNATURE, PngError, writeChunk } from '../../../lib/png/chunks.ts';

// Split like the still encoder: modest chunks for streaming readers.
const DATA_CHUNK = 1 << 20;
const DELAY_DEN = 1000;

const u32 = (view: DataView, at: number, v: number) => view.setUint32(at, v);

/**
 * Filter "Up" on every row but the first: the still encoder's per-row
 * search of all five filters costs several times more, and on video frames
 * (smooth, consecutive rows alike) Up compresses about as well.
 */
function upFilter(pixels: Uint8Array, rows: number, stride: number): Uint8Array {
  const out = new Uint8Array(rows * (stride + 1));
  for (let y = 0; y < rows; y++) {
    const o = y * (stride + 1);
    const c = y * stride;
    if (y === 0) {
      out.set(pixels.subarray(0, stride), o + 1);
      continue;
    }
    out[o] = 2;
    for (let i = 0; i < stride; i++) out[o + 1 + i] = pixels[c + i] - pixels[c - stride + i];
  }
  return out;
}

async function deflate(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream('deflate'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

export interface ApngWriter {
  /** The header: signature, IHDR and the animation control for `frames` frames. */
  readonly head: Uint8Array[];
  /**
   * Compresses one frame (`rgb`: width * height * 3 bytes, copied at once, so
   * the caller may reuse it). Several may be under way; `chunks` takes them in order.
   */
  compress(rgb: Uint8Array): Promise<Uint8Array>;
  /** The chunks of the next frame from its compressed data, shown for `delayMs`. */
  chunks(data: Uint8Array, delayMs: number): Uint8Array[];
  /** The closing chunk; after the last frame. */
  end(): Uint8Array;
}

/** An APNG of `frames` full-canvas 8-bit RGB frames, played once. */
export function createApngWriter(width: number, height: number, frames: number): ApngWriter {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1)
    throw new PngError(`cannot encode an APNG of size ${width}x${height}`);
  if (!Number.isInteger(frames) || frames < 1) throw new PngError(`an APNG needs at least one frame, got ${frames}`);
  const ihdr = new Uint8Array(13);
  const hv = new DataView(ihdr.buffer);
  u32(hv, 0, width);
  u32(hv, 4, height);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const actl = new Uint8Array(8);
  const av = new DataView(actl.buffer);
  u32(av, 0, frames);
  u32(av, 4, 1); // plays once, as a video does
  const stride = width * 3;
  let seq = 0;
  let written = 0;

  return {
    head: [PNG_SIGNATURE, writeChunk('IHDR', ihdr), writeChunk('acTL', actl)],
    compress(rgb) {
      if (rgb.length !== stride * height) throw new PngError(`an APNG frame has ${rgb.length} bytes, expected ${stride * height}`);
      return deflate(upFilter(rgb, height, stride));
    },
    chunks(data, delayMs) {
      if (written >= frames) throw new PngError(`the APNG was started for ${frames} frames`);
      const delay = Math.round(delayMs);
      if (delay < 0 || delay > 0xffff) throw new PngError(`an APNG frame delay of ${delayMs} ms is out of range`);
      const fctl = new Uint8Array(26);
      const fv = new DataView(fctl.buffer);
      u32(fv, 0, seq++);
      u32(fv, 4, width);
      u32(fv, 8, height);
      // x and y offsets stay 0: every frame covers the canvas.
      fv.setUint16(20, delay);
      fv.setUint16(22, DELAY_DEN);
      fctl[24] = 0; // dispose: none
      fctl[25] = 0; // blend: source (frames are opaque and whole)
      const out = [writeChunk('fcTL', fctl)];
      for (let at = 0; at < data.length; at += DATA_CHUNK) {
        const part = data.subarray(at, at + DATA_CHUNK);
        // The first frame is also the still image decoders without APNG show.
        if (written === 0) {
          out.push(writeChunk('IDAT', part));
        } else {
          const fdat = new Uint8Array(4 + part.length);
          u32(new DataView(fdat.buffer), 0, seq++);
          fdat.set(part, 4);
          out.push(writeChunk('fdAT', fdat));
        }
      }
      written++;
      return out;
    },
    end() {
      if (written !== frames) throw new PngError(`the APNG has ${written} of its ${frames} frames`);
      return writeChunk('IEND', new Uint8Array(0));
    },
  };
}
