// The PNG codec's public surface, for nodes and tests.
export { PngError, hasPngSignature } from './chunks.ts';
export { crc32 } from './crc.ts';
export { decodePng, type DecodedPng } from './decode.ts';
export { encodePng, type PngEncodeInput, type PngEncodeOptions } from './encode.ts';
export { DEFAULT_LIMITS, type PngLimits } from './header.ts';
export { imageBatchToPng, pngToImageBatch, type ImageBatchPngOptions, type PngImage } from './image-batch.ts';
