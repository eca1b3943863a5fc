// Serialises async work per key within one process. Blob commits and blob
// collection for the same content key take the same lock, so collection can
// never delete bytes that an upload is attaching a new asset to (across
// processes, assets/blob-locks.ts adds the storage's lock behind it).
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(fn, fn);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await result;
    } finally {
      // Only the last waiter for a key removes the entry, keeping the map small.
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
