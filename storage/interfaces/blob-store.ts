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

/** What a presigned read link of a blob store carries besides the key. */
export interface SignedUrlOptions {
  /** How long the link works, in seconds (at least 1; S3 allows at most 604800, a week). */
  expiresInSeconds: number;
  /** Name the download is offered under (`Content-Disposition` of the response). */
  filename?: string;
  /** `Content-Type` of the response, when the stored one is not the asset's. */
  contentType?: string;
}

export interface BlobStore {
  /**
   * Where the objects live (a directory's absolute file URL, a bucket and
   * prefix), for a store whose objects other store objects may reach: two
   * deployments in one process are refused one place (each would collect the
   * other's blobs as its orphans). A memory store has none.
   */
  readonly location?: string;
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
  /**
   * A short-lived URL that reads the object straight from the store, without
   * credentials (an S3 presigned GET), so downloads can be redirected there
   * instead of streaming through the service. Signing needs no request to
   * the store, so the URL is made whether or not the object exists (reading
   * a missing one fails there). Stores that cannot hand out URLs (a local
   * directory, memory) leave it out.
   */
  signedUrl?(key: string, options: SignedUrlOptions): Promise<string>;
  close?(): Promise<void>;
}
