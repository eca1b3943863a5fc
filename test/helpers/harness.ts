// Runs the same HTTP test twice: in process through `service.fetch`, and
// through a real Node server on a random port. Storage is the embedded
// default (SQLite + filesystem blobs) in a fresh temporary directory, or
// filesystem blobs under metadata the test opens (e.g. PostgreSQL).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNativeHasher } from '../../adapters/node/native-hasher.ts';
import { serve } from '../../adapters/node/server.ts';
import { createService, type DefaultServiceOptions, type Service, silentLogger } from '../../index.ts';
import { createFsBlobStore } from '../../storage/fs/blob-store.ts';
import { createSqliteStorage } from '../../storage/sql/sqlite.ts';
import type { BlobStore, Storage } from '../../storage/types.ts';

export type Mode = 'in-process' | 'node-server';

// GRAPHRUN_TEST_HASHER=native runs the HTTP tests with the Node adapter's native blake3 instead of hash-wasm.
const hasherKnob = process.env.GRAPHRUN_TEST_HASHER === 'native' ? { hasher: createNativeHasher } : {};
export const MODES: Mode[] = ['in-process', 'node-server'];

export interface Harness {
  mode: Mode;
  service: Service;
  /** Base URL requests go to (a fake origin in process, the server's URL otherwise). */
  base: string;
  dir: string;
  /** Fetches a path (joined to base) or an absolute URL the service handed out. */
  fetch(pathOrUrl: string, init?: RequestInit): Promise<Response>;
  /** The storage's committed blobs (their keys), and the blob directory's temporary files. */
  blobFiles(): Promise<{ blobs: string[]; temp: string[] }>;
  close(): Promise<void>;
}

/** The metadata half of the harness's storage over its blob store: SQLite in `dir` unless a test opens another. */
export type OpenStorage = (blobs: BlobStore, dir: string) => Promise<Storage>;

const openSqlite: OpenStorage = (blobs, dir) => createSqliteStorage({ filename: join(dir, 'graphrun.db'), blobs });

export async function startHarness(mode: Mode, options: Partial<DefaultServiceOptions> = {}, openStorage = openSqlite): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), 'graphrun-test-'));
  const blobsDir = join(dir, 'blobs');
  const blobs = await createFsBlobStore({ dir: blobsDir });
  const storage = await openStorage(blobs, dir);
  const service = await createService({ storage, logger: silentLogger, sweepIntervalMs: 0, ...hasherKnob, ...options });
  let base = 'http://graphrun.test';
  let stop = async () => {};
  if (mode === 'node-server') {
    const server = await serve(service, { host: '127.0.0.1', port: 0 });
    base = server.url;
    stop = () => server.close();
  }
  return {
    mode,
    service,
    base,
    dir,
    fetch(pathOrUrl, init) {
      const url = /^https?:\/\//.test(pathOrUrl) ? pathOrUrl : base + pathOrUrl;
      if (mode === 'in-process') return service.fetch(new Request(url, { ...init, duplex: 'half' } as RequestInit));
      return fetch(url, { ...init, duplex: 'half' } as RequestInit);
    },
    async blobFiles() {
      // Committed blobs wherever the storage keeps them (SQLite's inline ones in its database), by key.
      const stored: string[] = [];
      for await (const { key } of storage.blobs.list?.() ?? []) stored.push(key);
      return {
        blobs: stored,
        // Those of writers (or left by them): the store's temp file opened ahead for the next writer is none.
        temp: await blobs.tempFiles(),
      };
    },
    async close() {
      await stop();
      await service.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A multipart upload body for the v2 assets endpoint. */
export function uploadForm(bytes: Uint8Array | string, fields: Record<string, string | string[]> = {}, filename = 'file.bin'): FormData {
  const form = new FormData();
  const data = typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes;
  const merged = { content_type: 'application/octet-stream', file_path: filename, ...fields };
  for (const [name, value] of Object.entries(merged)) {
    for (const v of Array.isArray(value) ? value : [value]) form.append(name, v);
  }
  form.append('file', new Blob([data]), filename);
  return form;
}
