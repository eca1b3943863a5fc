// The local engine's cross-job cache of node results, bounded twice: in
// entries and in bytes (image data dominates, so a count alone let three
// large jobs pin gigabytes). Least recently used entries go first; a Map
// keeps insertion order, so re-inserting on read makes the first key the
// least recently used one.
import type { NodeResult } from './define-node.ts';

export interface ResultCache {
  get(key: string): NodeResult | undefined;
  set(key: string, value: NodeResult): void;
  readonly size: number;
  /** Bytes the kept results hold, as resultBytes counts them. */
  readonly bytes: number;
  clear(): void;
}

export interface ResultCacheLimits {
  /** Most results kept; 0 keeps none. */
  entries: number;
  /** Most bytes kept; a result larger than this is not kept at all. */
  bytes: number;
}

export function createResultCache(limits: ResultCacheLimits): ResultCache {
  for (const [name, value] of Object.entries(limits)) {
    if (!(Number.isInteger(value) || value === Infinity) || value < 0)
      throw new RangeError(`cache ${name} must be a whole number >= 0, got ${value}`);
  }
  const map = new Map<string, { value: NodeResult; bytes: number }>();
  let total = 0;
  const drop = (key: string) => {
    const entry = map.get(key);
    if (!entry) return;
    map.delete(key);
    total -= entry.bytes;
  };
  return {
    get(key) {
      const entry = map.get(key);
      if (!entry) return undefined;
      map.delete(key);
      map.set(key, entry);
      return entry.value;
    },
    set(key, value) {
      drop(key);
      const bytes = resultBytes(value);
      if (limits.entries === 0 || bytes > limits.bytes) return;
      map.set(key, { value, bytes });
      total += bytes;
      while (map.size > limits.entries || total > limits.bytes) drop(map.keys().next().value!);
    },
    get size() {
      return map.size;
    },
    get bytes() {
      return total;
    },
    clear() {
      map.clear();
      total = 0;
    },
  };
}

/**
 * What a result holds in memory, near enough to budget by: binary data at
 * its byte length (shared buffers once), strings at two bytes a character,
 * and a small figure for everything else. Values are walked on a stack of
 * its own, and objects seen once.
 */
export function resultBytes(result: NodeResult): number {
  const seen = new Set<unknown>();
  const stack: unknown[] = [result.outputs, result.ui];
  let bytes = 0;
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'string') bytes += 2 * value.length;
    else if (typeof value !== 'object' || value === null) bytes += 8;
    else if (seen.has(value)) continue;
    else if (ArrayBuffer.isView(value)) {
      seen.add(value);
      if (!seen.has(value.buffer)) bytes += value.buffer.byteLength;
      seen.add(value.buffer);
    } else {
      seen.add(value);
      bytes += 32;
      stack.push(...(Array.isArray(value) ? value : Object.values(value)));
    }
  }
  return bytes;
}
