// The engine's side of the asset store: outputs stream through the same
// hash-and-dedup path as uploads and become assets of the job's account that
// expire with the job; inputs are the account's live assets, by id or name.
import type { ExecutionContext, OutputAsset } from '../../engine/types.ts';
import type { AssetRecord, JobSummary } from '../../storage/types.ts';
import { discardBlob, mintOwnBytes, stageBlob } from '../assets/ingest.ts';
import { findByFileName } from '../cloud/file-names.ts';
import type { ServiceBase } from '../context.ts';

type OutputInput = Parameters<ExecutionContext['commitOutput']>[0];

async function* chunksOf(body: OutputInput['body']): AsyncIterable<Uint8Array> {
  if (body instanceof Uint8Array) yield body;
  else yield* body;
}

export const toOutputAsset = (a: AssetRecord): OutputAsset => ({
  id: a.id,
  node_id: a.node_id ?? '',
  name: a.file_path ?? a.id,
  type: (a.output_type ?? 'file') as OutputAsset['type'],
  content_type: a.content_type,
  size_bytes: a.size_bytes,
  hash: a.hash,
});

/** How long temporary files (previews) are kept. */
export const TEMP_RETENTION_MS = 24 * 3600 * 1000;

/**
 * The job's outputs as one run knows them, read at most once per run. Only
 * the run holding the job commits its outputs (a commit is fenced by the
 * lease), so after that read only the run's own commits add to them; and a
 * first attempt has none to read: every run begins with a claim, which counts
 * an attempt.
 */
export interface RunOutputs {
  known?: Promise<AssetRecord[]>;
}

function knownOutputs(ctx: ServiceBase, job: JobSummary, run: RunOutputs): Promise<AssetRecord[]> {
  if (run.known) return run.known;
  const read = job.attempts <= 1 ? Promise.resolve([]) : ctx.metadata.listJobAssets(job.account_id, job.id);
  run.known = read;
  // A failed read fails this commit only: the next one reads again.
  read.catch(() => {
    if (run.known === read) run.known = undefined;
  });
  return read;
}

/**
 * The first of the known outputs that `matches` and still exists. Rare (a
 * file made twice), so each match is read again: the owner may have deleted
 * it since, and then it is no output of the job any more.
 */
async function liveMatch(ctx: ServiceBase, job: JobSummary, known: AssetRecord[], matches: (a: AssetRecord) => boolean): Promise<AssetRecord | null> {
  for (let entry = known.find(matches); entry !== undefined; entry = known.find(matches)) {
    const live = await ctx.metadata.getAsset(job.account_id, entry.id, ctx.now());
    if (live) return live;
    const at = known.indexOf(entry);
    if (at >= 0) known.splice(at, 1);
  }
  return null;
}

/**
 * Commits one output. A job that runs again produces the same files: an
 * output with the same node, name and bytes as one the job already has is
 * that one, so outputs committed before are kept and not listed twice.
 * Checked on every attempt, not only after a restart: an engine may run a
 * job again within one attempt (the worker engine, after a lost worker,
 * commits a re-run's file under the name of the output it matches).
 * Returns the asset and whether it is new.
 */
export async function commitJobOutput(
  ctx: ServiceBase,
  job: JobSummary,
  output: OutputInput,
  run: RunOutputs = {},
): Promise<{ asset: AssetRecord; created: boolean }> {
  const staged = await stageBlob(ctx, chunksOf(output.body));
  if (output.temporary) {
    // Not an output of the job (no job_id): a file of the account, fetchable by name for a day.
    const result = await mintOwnBytes(ctx, staged, {
      account_id: job.account_id,
      content_type: output.content_type,
      file_path: output.name,
      tags: ['temp'],
      expires_at: Math.min(ctx.now() + TEMP_RETENTION_MS, job.expires_at),
      job_id: null,
      node_id: output.node_id,
      output_type: output.type,
    });
    return { asset: result.asset, created: true };
  }
  const known = await knownOutputs(ctx, job, run);
  const same = await liveMatch(ctx, job, known, (a) => a.node_id === output.node_id && a.file_path === output.name && a.hash === staged.hash);
  if (same) {
    await discardBlob(ctx, staged.writer);
    return { asset: same, created: false };
  }
  const result = await mintOwnBytes(ctx, staged, {
    account_id: job.account_id,
    content_type: output.content_type,
    file_path: output.name,
    tags: ['output'],
    expires_at: job.expires_at,
    // Exactly the job's (mintOwnBytes): an upload of the same bytes must not keep the output alive past its job.
    job_id: job.id,
    node_id: output.node_id,
    output_type: output.type,
    // A run whose lease was taken back stores no more outputs of the job.
    ...(job.lease && { fence: { job_id: job.id, lease_token: job.lease.token } }),
  });
  known.push(result.asset);
  return { asset: result.asset, created: true };
}

/** An input asset of the job's account: by id, or the newest with that file name. */
export async function readJobAsset(
  ctx: ServiceBase,
  accountId: string,
  ref: { id?: string; name?: string },
): ReturnType<ExecutionContext['readAsset']> {
  // A name is a file path or a content-addressed name (what history and /ws show for outputs).
  const asset = ref.id ? await ctx.metadata.getAsset(accountId, ref.id, ctx.now()) : ref.name ? await findByFileName(ctx, accountId, ref.name) : null;
  if (!asset) return null;
  const body = await ctx.blobs.get(asset.blob_key);
  // Collected between the row read and the byte read: as absent as a deleted asset.
  if (!body) return null;
  return { id: asset.id, content_type: asset.content_type, size_bytes: asset.size_bytes, body };
}
