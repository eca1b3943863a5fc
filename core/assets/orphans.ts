// Blob files without a blob row: a crash between the link that publishes an
// upload's bytes and the row that records them leaves the bytes behind, and
// nothing would ever collect them. Found by listing the blob store against
// the rows, and removed once older than a grace period (an upload may be
// between its link and its row right now: the blob lock orders them on this
// instance, and on every instance where the storage locks blob keys across
// processes; the grace covers storages that do not).
import type { ServiceBase } from '../context.ts';

const BATCH = 500;

/** Removes the blob store's objects that have had no row for `graceMs`; returns how many. */
export async function removeOrphanBlobs(ctx: Pick<ServiceBase, 'blobs' | 'metadata' | 'blobLocks' | 'now'>, graceMs: number): Promise<number> {
  const list = ctx.blobs.list;
  if (!list) return 0;
  const before = ctx.now() - graceMs;
  let removed = 0;
  let batch: string[] = [];
  const flush = async () => {
    const known = new Set(await ctx.metadata.knownBlobKeys(batch));
    for (const key of batch) {
      if (known.has(key)) continue;
      // Checked again under the key's lock: a commit may have recorded it since.
      const gone = await ctx.blobLocks.run(key, async () => {
        if ((await ctx.metadata.knownBlobKeys([key])).length > 0) return false;
        await ctx.blobs.delete(key);
        return true;
      });
      if (gone) removed++;
    }
    batch = [];
  };
  for await (const object of list.call(ctx.blobs)) {
    if (object.modified_at > before) continue;
    batch.push(object.key);
    if (batch.length >= BATCH) await flush();
  }
  if (batch.length > 0) await flush();
  return removed;
}
