// The in-memory storage: both halves in plain maps, nothing to configure.
import type { Storage } from '../types.ts';
import { createMemoryBlobStore } from './blob-store.ts';
import { createMemoryMetadataStore } from './metadata-store.ts';

export type { BlobStore, MetadataStore, Storage } from '../types.ts';
export { createMemoryBlobStore } from './blob-store.ts';
export { createMemoryMetadataStore } from './metadata-store.ts';

export function createMemoryStorage(): Storage {
  return { metadata: createMemoryMetadataStore(), blobs: createMemoryBlobStore() };
}
