// A small bounded LRU map for the local engine's cross-job output cache. A
// Map keeps insertion order, so re-inserting on read makes the first key the
// least recently used one.
export interface LruCache<V> {
  get(key: string): V | undefined;
  set(key: string, value: V): void;
  readonly size: number;
  clear(): void;
}

export function createLruCache<V>(capacity: number): LruCache<V> {
  if (!Number.isInteger(capacity) || capacity < 0) throw new RangeError(`cache capacity must be a whole number >= 0, got ${capacity}`);
  const map = new Map<string, V>();
  return {
    get(key) {
      const value = map.get(key);
      if (value === undefined) return undefined;
      map.delete(key);
      map.set(key, value);
      return value;
    },
    set(key, value) {
      if (capacity === 0) return;
      map.delete(key);
      map.set(key, value);
      while (map.size > capacity) map.delete(map.keys().next().value!);
    },
    get size() {
      return map.size;
    },
    clear: () => map.clear(),
  };
}
