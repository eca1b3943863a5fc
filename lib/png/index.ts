// The PNG codec's public surface (bytes in, bytes out); lib/image/png-batch.ts
// converts to and from the image batches the local engine passes along.
export { hasPngSignature, PngError, PngMemoryError } from './chunks.ts';
export { crc32 } from './crc.ts';
export { type DecodedPng, type DecodedPngRgba8, decodePng, decodePngRgba8, type PngDecodeOptions } from './decode.ts';
export { encodePng, type PngEncodeInput, type PngEncodeOptions } from './encode.ts';
export { DEFAULT_LIMITS, decodeBytes, type PngHeader, type PngLimits, readPngHeader } from './header.ts';
