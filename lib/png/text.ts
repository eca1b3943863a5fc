// Textual metadata chunks. The reference stores the workflow as tEXt
// `prompt`/`workflow`; like Pillow, text that Latin-1 cannot hold goes into an
// uncompressed iTXt chunk instead. Compressed zTXt/iTXt are skipped on read:
// inflating them would be another unbounded decompression.
import { concatBytes } from '../bytes.ts';
import { PngError, writeChunk } from './chunks.ts';

function latin1(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 8192) s += String.fromCharCode(...bytes.subarray(i, i + 8192));
  return s;
}

function isLatin1(s: string): boolean {
  return /^[\u0000-\u00ff]*$/.test(s);
}

function latin1Bytes(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/** Returns [keyword, text] of a tEXt or uncompressed iTXt chunk, or null to skip it. */
export function parseTextChunk(type: string, data: Uint8Array): [string, string] | null {
  const nul = data.indexOf(0);
  if (nul < 1) return null;
  const key = latin1(data.subarray(0, nul));
  if (type === 'tEXt') return [key, latin1(data.subarray(nul + 1))];
  if (type !== 'iTXt' || data[nul + 1] !== 0) return null;
  const lang = data.indexOf(0, nul + 3);
  const translated = lang < 0 ? -1 : data.indexOf(0, lang + 1);
  if (translated < 0) return null;
  return [key, new TextDecoder().decode(data.subarray(translated + 1))];
}

/** Frames one key/value as tEXt, or as iTXt when the value is not Latin-1. */
export function textChunk(key: string, value: string): Uint8Array {
  if (key.length < 1 || key.length > 79 || !isLatin1(key) || key.includes('\0')) {
    throw new PngError(`PNG text keyword must be 1-79 Latin-1 characters: ${JSON.stringify(key)}`);
  }
  if (isLatin1(value)) return writeChunk('tEXt', concatBytes([latin1Bytes(key), new Uint8Array([0]), latin1Bytes(value)]));
  // keyword \0, compression flag 0, method 0, empty language tag \0, empty translated keyword \0
  const head = concatBytes([latin1Bytes(key), new Uint8Array([0, 0, 0, 0, 0])]);
  return writeChunk('iTXt', concatBytes([head, new TextEncoder().encode(value)]));
}
