// The `/ws` frame encoders, byte for byte against the reference's layouts
// (all integers big-endian): text frames, PREVIEW_IMAGE (1), TEXT (3),
// PREVIEW_IMAGE_WITH_METADATA (4).
import { describe, expect, it } from 'vitest';
import { BinaryType, jsonFrame, previewImageFrame, previewWithMetadataFrame, textFrame } from '../core/ws/frames.ts';

const bytes = (...b: number[]) => new Uint8Array(b);
const utf8 = (s: string) => [...new TextEncoder().encode(s)];

describe('ws frames', () => {
  it('text frames are {type, data} JSON', () => {
    expect(jsonFrame('execution_start', { prompt_id: 'p', timestamp: 5 })).toBe('{"type":"execution_start","data":{"prompt_id":"p","timestamp":5}}');
    expect(JSON.parse(jsonFrame('executing', { node: null, display_node: null, prompt_id: 'p' }))).toEqual({
      type: 'executing',
      data: { node: null, display_node: null, prompt_id: 'p' },
    });
  });

  it('the binary type numbers are the reference ones', () => {
    expect(BinaryType).toEqual({ PREVIEW_IMAGE: 1, TEXT: 3, PREVIEW_IMAGE_WITH_METADATA: 4 });
  });

  it('PREVIEW_IMAGE: [u32 1][u32 image_type][bytes], JPEG 1 and PNG 2', () => {
    expect([...previewImageFrame('png', bytes(0x89, 0x50, 0x4e, 0x47))]).toEqual([0, 0, 0, 1, 0, 0, 0, 2, 0x89, 0x50, 0x4e, 0x47]);
    expect([...previewImageFrame('jpeg', bytes(0xff, 0xd8, 0xff))]).toEqual([0, 0, 0, 1, 0, 0, 0, 1, 0xff, 0xd8, 0xff]);
    expect([...previewImageFrame('png', bytes())]).toEqual([0, 0, 0, 1, 0, 0, 0, 2]);
  });

  it('TEXT: [u32 3][u32 node_id byte length][node_id][text], UTF-8', () => {
    expect([...textFrame('12', 'hi')]).toEqual([0, 0, 0, 3, 0, 0, 0, 2, ...utf8('12'), ...utf8('hi')]);
    // Lengths count bytes, not characters.
    expect([...textFrame('nœud', 'été ✓')]).toEqual([0, 0, 0, 3, 0, 0, 0, 5, ...utf8('nœud'), ...utf8('été ✓')]);
    expect([...textFrame('', '')]).toEqual([0, 0, 0, 3, 0, 0, 0, 0]);
  });

  it('PREVIEW_IMAGE_WITH_METADATA: [u32 4][u32 json length][json][bytes]', () => {
    const meta = { node_id: '9', prompt_id: 'p-1', display_node_id: '9', parent_node_id: null, real_node_id: '9' };
    const json = '{"node_id":"9","prompt_id":"p-1","display_node_id":"9","parent_node_id":null,"real_node_id":"9","image_type":"image/png"}';
    const frame = previewWithMetadataFrame(meta, 'png', bytes(1, 2, 3));
    expect([...frame]).toEqual([0, 0, 0, 4, 0, 0, 0, json.length, ...utf8(json), 1, 2, 3]);
    const jpeg = previewWithMetadataFrame(meta, 'jpeg', bytes(0xff));
    const len = new DataView(jpeg.buffer).getUint32(4);
    expect(JSON.parse(new TextDecoder().decode(jpeg.subarray(8, 8 + len)))).toEqual({ ...meta, image_type: 'image/jpeg' });
    expect([...jpeg.subarray(8 + len)]).toEqual([0xff]);
  });

  it('lengths above 255 are written as full big-endian words', () => {
    const id = 'n'.repeat(300);
    const frame = textFrame(id, 'x');
    expect([...frame.subarray(4, 8)]).toEqual([0, 0, 1, 44]);
    expect(frame.byteLength).toBe(8 + 300 + 1);
    const big = new Uint8Array(70_000).fill(7);
    const preview = previewImageFrame('jpeg', big);
    expect(preview.byteLength).toBe(70_008);
    expect(preview[8]).toBe(7);
    expect(preview[70_007]).toBe(7);
  });
});
