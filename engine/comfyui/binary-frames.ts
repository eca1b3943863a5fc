// Decodes the worker's binary WebSocket frames (reference: 4-byte big-endian
// type; 1 = preview, 3 = text, 4 = preview with JSON metadata). Pure, so the
// layouts are unit-tested apart from any socket.

export type BinaryFrame =
  | { kind: 'preview'; format: 'png' | 'jpeg'; bytes: Uint8Array; node_id: string | null; prompt_id: string | null }
  | { kind: 'text'; node_id: string; text: string }
  | { kind: 'unknown'; type: number };

const utf8 = new TextDecoder();

function formatOf(mime: unknown, code?: number): 'png' | 'jpeg' {
  if (typeof mime === 'string') return /png/i.test(mime) ? 'png' : 'jpeg';
  return code === 2 ? 'png' : 'jpeg';
}

export function decodeBinaryFrame(data: Uint8Array): BinaryFrame | null {
  if (data.byteLength < 8) return null;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const type = view.getUint32(0);
  const second = view.getUint32(4);
  switch (type) {
    case 1:
      return { kind: 'preview', format: formatOf(undefined, second), bytes: data.subarray(8), node_id: null, prompt_id: null };
    case 3: {
      if (8 + second > data.byteLength) return null;
      return { kind: 'text', node_id: utf8.decode(data.subarray(8, 8 + second)), text: utf8.decode(data.subarray(8 + second)) };
    }
    case 4: {
      if (8 + second > data.byteLength) return null;
      let meta: Record<string, unknown> = {};
      try {
        const parsed: unknown = JSON.parse(utf8.decode(data.subarray(8, 8 + second)));
        if (parsed && typeof parsed === 'object') meta = parsed as Record<string, unknown>;
      } catch {
        return null;
      }
      const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
      return {
        kind: 'preview',
        format: formatOf(meta.image_type),
        bytes: data.subarray(8 + second),
        node_id: str(meta.node_id) ?? str(meta.display_node_id) ?? str(meta.real_node_id),
        prompt_id: str(meta.prompt_id),
      };
    }
    default:
      return { kind: 'unknown', type };
  }
}
