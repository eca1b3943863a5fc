// The byte path every stored asset takes: bytes stream through blake3 into a
// temporary blob object; once the hash is known the object is committed under
// its content key (or dropped on a dedup hit) and the asset row is written.
// Uploads use it now; engine outputs will take the same path.
import { newId } from '../../lib/uuid.ts';
import type { AssetRecord, BlobWriter, CommitAssetResult, LeaseFence } from '../../storage/types.ts';
import type { ServiceBase } from '../context.ts';
import { ApiError } from '../errors.ts';
import { blobKeyOf } from '../hash.ts';
import { errorFields } from '../log.ts';

export interface StagedBlob {
  readonly hash: string;
  readonly size: number;
  readonly writer: BlobWriter;
}

/**
 * Streams `body` into a temporary object while hashing it. The writer is
 * aborted (nothing left behind) if the body fails.
 */
/**
 * Drops the bytes of an upload that failed. A store that cannot drop them
 * (an S3 server without AbortMultipartUpload) leaves a temporary for its own
 * cleanup; the upload's own error is what the client must see, so this never
 * throws.
 */
export async function discardBlob(ctx: ServiceBase, writer: BlobWriter): Promise<void> {
  await writer.abort().catch((err: unknown) => ctx.logger.warn('could not discard the bytes of a failed upload', errorFields(err)));
}

export async function stageBlob(ctx: ServiceBase, body: AsyncIterable<Uint8Array>): Promise<StagedBlob> {
  const hasher = await ctx.createHasher();
  const writer = await ctx.blobs.begin();
  let size = 0;
  try {
    for await (const chunk of body) {
      size += chunk.length;
      const pushBack = hasher.update(chunk);
      if (pushBack) await pushBack;
      // The store overlaps its own I/O and resolves early; it waits only to push back.
      await writer.write(chunk);
    }
  } catch (err) {
    hasher.abort?.();
    await discardBlob(ctx, writer);
    throw err;
  }
  let hash: string;
  try {
    hash = await hasher.digest();
  } catch (err) {
    await discardBlob(ctx, writer);
    throw err;
  }
  return { hash, size, writer };
}

export interface MintResult extends CommitAssetResult {
  /**
   * False when the account already held these bytes. Scoped to the account,
   * not the service: another account's identical upload must not show, the
   * same way from-hash cannot tell "absent" from "not yours".
   */
  created_new: boolean;
}

/** The later of two retention deadlines; null means "never expires". */
export function laterDeadline(a: number | null, b: number | null): number | null {
  return a === null || b === null ? null : Math.max(a, b);
}

export interface AssetFields {
  account_id: string;
  content_type: string;
  file_path: string | null;
  tags: string[];
  /** Requested retention deadline; a dedup hit may extend it, never shorten it. */
  expires_at: number | null;
  /** False: keep `expires_at` as given (job outputs live exactly as long as their job). Default true. */
  extendRetention?: boolean;
  /** A job output: stored only while the run still holds the job's lease (AssetStore.commitAsset). */
  fence?: LeaseFence;
  job_id: string | null;
  /** Job outputs: the producing node and the output's kind. */
  node_id?: string | null;
  output_type?: string | null;
}

/**
 * Under the blob key's lock: keeps the bytes (put-if-absent), then records the
 * asset in one transaction. Retention extends to the account's longest-lived
 * asset over the same bytes, since re-referencing content never shortens it.
 */
export function mintAsset(
  ctx: ServiceBase,
  blob: { hash: string; size: number; key?: string; writer?: BlobWriter },
  fields: AssetFields,
): Promise<MintResult> {
  return mint(ctx, blob, fields, true) as Promise<MintResult>;
}

/**
 * mintAsset for new bytes (their writer) kept exactly until `expires_at` (job
 * outputs, generated videos): neither the deadline nor the answer depends on
 * what the account held before, so that is not read.
 */
export function mintOwnBytes(
  ctx: ServiceBase,
  blob: { hash: string; size: number; writer: BlobWriter },
  fields: Omit<AssetFields, 'extendRetention'>,
): Promise<CommitAssetResult> {
  return mint(ctx, blob, { ...fields, extendRetention: false }, false);
}

async function mint(
  ctx: ServiceBase,
  blob: { hash: string; size: number; key?: string; writer?: BlobWriter },
  fields: AssetFields,
  readHeld: boolean,
): Promise<MintResult | CommitAssetResult> {
  const key = blob.key ?? blobKeyOf(blob.hash);
  return ctx.blobLocks.run(key, async () => {
    if (await ctx.metadata.isBlobBlocked(key)) {
      if (blob.writer) await discardBlob(ctx, blob.writer);
      throw new ApiError('forbidden', 'This content was refused by the content scanner.');
    }
    const createdBytes = blob.writer ? await blob.writer.commit(key) : false;
    try {
      const now = ctx.now();
      const existing = readHeld ? await ctx.metadata.listAssetsByHash(fields.account_id, blob.hash, now) : [];
      // Without new bytes, only content the account still holds may be re-referenced:
      // under the lock this also rules out minting over a blob just collected.
      if (!blob.writer && existing.length === 0) {
        throw new ApiError('blob_not_found', 'No stored content with this hash is available to this account.');
      }
      const { extendRetention = true, fence, ...record } = fields;
      const expires_at = extendRetention
        ? existing.reduce<number | null>((d, a) => laterDeadline(d, a.expires_at), fields.expires_at)
        : fields.expires_at;
      const result = await ctx.metadata.commitAsset(
        { key, hash: blob.hash, size: blob.size },
        { ...record, id: newId(), blob_key: key, created_at: now, expires_at },
        fence,
      );
      return readHeld ? { ...result, created_new: existing.length === 0 } : result;
    } catch (err) {
      if (createdBytes) await ctx.blobs.delete(key).catch(() => undefined);
      throw err;
    }
  });
}

/** Deletes the blob's bytes and row if no asset references it any more. */
export async function collectBlob(ctx: ServiceBase, key: string): Promise<boolean> {
  return ctx.blobLocks.run(key, async () => {
    if (!(await ctx.metadata.deleteBlobIfUnreferenced(key))) return false;
    await ctx.blobs.delete(key);
    return true;
  });
}

/** Schedules the content scanner, if any, after the response is on its way. */
export function scheduleScan(ctx: ServiceBase, asset: AssetRecord, view: Parameters<NonNullable<ServiceBase['scanner']>>[0]) {
  const scanner = ctx.scanner;
  if (!scanner) return;
  ctx.background.run(`scan ${asset.id}`, async () => {
    const verdict = await scanner(view, {
      open: async () => {
        const stream = await ctx.blobs.get(asset.blob_key);
        if (!stream) throw new Error(`blob ${asset.blob_key} is missing`);
        return stream;
      },
    });
    if (verdict && verdict.action === 'delete') {
      // The verdict is about the bytes: every asset over them goes, in every
      // account, and the same bytes are refused from now on, so neither
      // from-hash nor a re-upload during or after the scan keeps them.
      const removed = await ctx.blobLocks.run(asset.blob_key, () =>
        ctx.metadata.blockBlob(asset.blob_key, verdict.reason ?? 'refused by scanner', ctx.now()),
      );
      ctx.logger.warn('scanner refused content', { blob_key: asset.blob_key, assets_removed: removed, reason: verdict.reason });
      await collectBlob(ctx, asset.blob_key);
    }
  });
}
