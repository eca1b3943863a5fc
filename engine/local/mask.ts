// The MASK value local nodes pass along: a batch of single-channel float
// planes in 0..1, laid out [batch][y][x] like the reference's mask tensors
// (1 = masked; LoadImage makes it 1 - alpha).
export interface MaskBatch {
  width: number;
  height: number;
  count: number;
  /** count * height * width values in 0..1. */
  data: Float32Array;
}

export function createMaskBatch(width: number, height: number, count: number): MaskBatch {
  return { width, height, count, data: new Float32Array(width * height * count) };
}

export function isMaskBatch(value: unknown): value is MaskBatch {
  const v = value as MaskBatch | null;
  return !!v && v.data instanceof Float32Array && v.data.length === v.width * v.height * v.count;
}
