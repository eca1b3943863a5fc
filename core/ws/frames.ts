// The WebSocket frames of the cloud-compatible `/ws` stream, as the reference
// engine writes them: JSON text frames `{type, data}`, and binary frames that
// start with a 4-byte big-endian type. Pure encoders: Web APIs only.
import { stringifyJson } from '../../lib/json.ts';

/** The reference's binary event types. */
export const BinaryType = {
  PREVIEW_IMAGE: 1,
  TEXT: 3,
  PREVIEW_IMAGE_WITH_METADATA: 4,
} as const;

/** `image_type` of a PREVIEW_IMAGE frame. */
export const ImageType = { jpeg: 1, png: 2 } as const;

export type PreviewFormat = keyof typeof ImageType;

/** The JSON of a PREVIEW_IMAGE_WITH_METADATA frame (the reference's field order). */
export interface PreviewMetadata {
  node_id: string;
  prompt_id: string;
  display_node_id: string;
  parent_node_id: string | null;
  real_node_id: string;
}

const encoder = new TextEncoder();

/** A text frame: `{"type": ..., "data": ...}`. */
export function jsonFrame(type: string, data: unknown): string {
  return stringifyJson({ type, data });
}

/** `[u32 type][u32 a][rest...]`, one allocation. */
function binary(type: number, word: number, ...parts: Uint8Array[]): Uint8Array {
  const length = 8 + parts.reduce((n, p) => n + p.byteLength, 0);
  const out = new Uint8Array(length);
  const view = new DataView(out.buffer);
  view.setUint32(0, type, false);
  view.setUint32(4, word, false);
  let at = 8;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

/** PREVIEW_IMAGE (1): `[1][image_type: 1 JPEG, 2 PNG][image bytes]`. */
export function previewImageFrame(format: PreviewFormat, image: Uint8Array): Uint8Array {
  return binary(BinaryType.PREVIEW_IMAGE, ImageType[format], image);
}

/** TEXT (3): `[3][node_id byte length][node_id UTF-8][text UTF-8]`. */
export function textFrame(nodeId: string, text: string): Uint8Array {
  const id = encoder.encode(nodeId);
  return binary(BinaryType.TEXT, id.byteLength, id, encoder.encode(text));
}

/**
 * PREVIEW_IMAGE_WITH_METADATA (4): `[4][json byte length][json UTF-8][image
 * bytes]`; the JSON adds `image_type` as a media type, as the reference does.
 */
export function previewWithMetadataFrame(meta: PreviewMetadata, format: PreviewFormat, image: Uint8Array): Uint8Array {
  const json = encoder.encode(
    stringifyJson({
      node_id: meta.node_id,
      prompt_id: meta.prompt_id,
      display_node_id: meta.display_node_id,
      parent_node_id: meta.parent_node_id,
      real_node_id: meta.real_node_id,
      image_type: format === 'png' ? 'image/png' : 'image/jpeg',
    }),
  );
  return binary(BinaryType.PREVIEW_IMAGE_WITH_METADATA, json.byteLength, json, image);
}
