// Records shared by the metadata store conformance cases.
import type { NewAsset } from '../../storage/types.ts';

export const T0 = 1_700_000_000_000;

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
