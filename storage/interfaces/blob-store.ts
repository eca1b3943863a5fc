// The blob store: content-addressed bytes, written to a temporary object
// while their hash is computed, then committed under their key.

/** A byte range, both ends inclusive, as HTTP ranges are. */
export interface ByteRange {
  start: number;
  end: number;
}

/** Bytes being written to a temporary object before their key is known. */
export interface BlobWriter {
  /**
   * Appends a chunk. The store copies or consumes the chunk before resolving,
   * so the caller may reuse it; a store may resolve before the bytes reach
   * durable storage (commit makes them durable) and should wait only to push
   * back when too much is pending. Errors surface on a later write or commit.
   */
  write(chunk: Uint8Array): Promise<void>;
  /**
   * Moves the temporary object to `key` if no object has that key yet,
   * otherwise drops it. Returns true when this call created the object.
   */
  commit(key: string): Promise<boolean>;
  /** Discards the temporary object; safe to call more than once. */
  abort(): Promise<void>;
}

export interface BlobStore {
  begin(): Promise<BlobWriter>;
  /** The object's bytes (or the range of them); null when there is no object. */
  get(key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array> | null>;
  has(key: string): Promise<boolean>;
  delete(key: string): Promise<void>;
  /**
   * Every committed object with when it was last written (epoch ms), in no
   * particular order, for reconciliation with the metadata (objects a crash
   * left without their row). A store that cannot list leaves it out.
   */
  list?(): AsyncIterable<{ key: string; modified_at: number }>;
  close?(): Promise<void>;
}
