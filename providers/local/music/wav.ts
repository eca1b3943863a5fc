// The 44-byte RIFF/WAVE header of 16-bit PCM. Written first, before any
// sample exists: the duration is known up front, so are all the sizes.
export const WAV_HEADER_BYTES = 44;

export interface PcmFormat {
  sampleRate: number;
  channels: number;
  /** Sample frames in the file. */
  frames: number;
}

export const wavDataBytes = (f: PcmFormat) => f.frames * f.channels * 2;
export const wavFileBytes = (f: PcmFormat) => WAV_HEADER_BYTES + wavDataBytes(f);

export function wavHeader(f: PcmFormat): Uint8Array {
  const out = new Uint8Array(WAV_HEADER_BYTES);
  const view = new DataView(out.buffer);
  const ascii = (at: number, text: string) => {
    for (let i = 0; i < text.length; i++) out[at + i] = text.charCodeAt(i);
  };
  const blockAlign = f.channels * 2;
  ascii(0, 'RIFF');
  view.setUint32(4, wavFileBytes(f) - 8, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  view.setUint32(16, 16, true); // fmt chunk size for PCM
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, f.channels, true);
  view.setUint32(24, f.sampleRate, true);
  view.setUint32(28, f.sampleRate * blockAlign, true);
  view.setUint16(32, blockAlign, true);
  view.setUint16(34, 16, true);
  ascii(36, 'data');
  view.setUint32(40, wavDataBytes(f), true);
  return out;
}
