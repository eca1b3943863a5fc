// What the metadata store conformance suites share: how a backend hands them
// a fresh store, and the records their cases build.
import type { NewAsset, NewJob, VideoTaskRecord } from '../../storage/types.ts';

/** A fresh, empty store for one test, and how to let go of it afterwards. */
export interface StoreFixture<S> {
  store: S;
  cleanup(): Promise<void>;
}

/** Called before every test: each case starts from an empty store. */
export type MakeStore<S> = () => Promise<StoreFixture<S>>;

export const T0 = 1_700_000_000_000;

/** A queued job of account acc1, kept a day, with `over` applied. */
export const newJob = (id: string, over: Partial<NewJob> = {}): NewJob => ({
  id,
  account_id: 'acc1',
  status: 'queued',
  workflow: { '1': { class_type: 'LoadImage', inputs: { image: 'cat.png' } } },
  created_at: T0,
  expires_at: T0 + 86_400_000,
  ...over,
});

/** An asset row of account acc1 over `blobKey`, with `over` applied. */
export const newAsset = (id: string, blobKey: string, over: Partial<NewAsset> = {}): NewAsset => ({
  id,
  account_id: 'acc1',
  blob_key: blobKey,
  content_type: 'image/png',
  file_path: null,
  tags: [],
  created_at: T0,
  expires_at: null,
  job_id: null,
  ...over,
});

/** The hash a test gives the blob under `key`: distinct per key. */
export const hashOf = (key: string) => `blake3:${key}`;

/** A blob row under `key` (hash from the key unless given), as commitAsset takes it. */
export const blob = (key: string, hash: string | null = hashOf(key), size = 10) => ({ key, hash, size });

/** A video task of account acct in state created, with `extra` applied. */
export const videoTask = (id: string, extra: Partial<VideoTaskRecord> = {}): VideoTaskRecord => ({
  id,
  account_id: 'acct',
  state: 'created',
  request: { model: 'gen-q2-turbo', image_settings: [{ key_image: 'https://example.com/a.png', duration: 2, prompt: 'x' }] },
  credits: 4,
  provider: 'local',
  provider_task_id: null,
  link_base: 'http://127.0.0.1:1/mount',
  output_asset_id: null,
  error: null,
  created_at: 1000,
  updated_at: 1000,
  expires_at: 99_000,
  ...extra,
});
