// The IMAGE value local nodes pass along: a batch of same-sized RGB images as
// floats in 0..1, laid out [batch][y][x][channel] like the reference's tensors.
export interface ImageBatch {
  width: number;
  height: number;
  count: number;
  /** count * height * width * 3 values in 0..1. */
  data: Float32Array;
}

export function createImageBatch(width: number, height: number, count: number): ImageBatch {
  return { width, height, count, data: new Float32Array(width * height * count * 3) };
}

export function isImageBatch(value: unknown): value is ImageBatch {
  const v = value as ImageBatch | null;
  return !!v && v.data instanceof Float32Array && v.data.length === v.width * v.height * v.count * 3;
}
