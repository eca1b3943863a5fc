// commitJobOutput with a run's memo of its job's outputs (core/jobs/outputs.ts):
// the same file committed twice in a run is one output; one deleted meanwhile
// is not matched again; a later attempt finds what earlier ones committed.
import { describe, expect, it } from 'vitest';
import { createBlobLocks } from '../core/assets/blob-locks.ts';
import type { ServiceBase } from '../core/context.ts';
import { commitJobOutput, type RunOutputs } from '../core/jobs/outputs.ts';
import { createHasher } from '../lib/blake3.ts';
import { createMemoryBlobStore, createMemoryMetadataStore } from '../storage/memory/index.ts';
import type { JobSummary } from '../storage/types.ts';

const NOW = 1_000_000;

async function setup() {
  const metadata = createMemoryMetadataStore();
  const blobs = createMemoryBlobStore();
  // Only what committing an output reads of the service.
  const ctx = { metadata, blobs, blobLocks: createBlobLocks(undefined), now: () => NOW, createHasher, logger: console } as unknown as ServiceBase;
  await metadata.upsertAccount({ id: 'acc' });
  await metadata.createJob({ id: 'job-1', account_id: 'acc', status: 'queued', created_at: 1, expires_at: NOW * 10, workflow: {} });
  const claim = async () => (await metadata.claimJob({ account_id: 'acc', limit: 1, owner: 'runner', now: 2, lease_ms: NOW }))!;
  return { ctx, metadata, claim };
}

const output = (bytes = 'the same bytes') => ({
  node_id: '9',
  name: 'out.png',
  type: 'image' as const,
  content_type: 'image/png',
  body: new TextEncoder().encode(bytes),
});

const jobAssetIds = async (metadata: ServiceBase['metadata']) => (await metadata.listJobAssets('acc', 'job-1')).map((a) => a.id);

describe('commitJobOutput within one run', () => {
  it('a file committed twice in a run is the one output, found again', async () => {
    const { ctx, metadata, claim } = await setup();
    const job = await claim();
    expect(job.attempts).toBe(1);
    const run: RunOutputs = {};
    const first = await commitJobOutput(ctx, job, output(), run);
    const again = await commitJobOutput(ctx, job, output(), run);
    expect(first.created).toBe(true);
    expect(again).toMatchObject({ created: false, asset: { id: first.asset.id } });
    // Other bytes under the same name are another output.
    const other = await commitJobOutput(ctx, job, output('other bytes'), run);
    expect(other.created).toBe(true);
    // Both committed at the same instant: their order is not the point.
    expect((await jobAssetIds(metadata)).sort()).toEqual([first.asset.id, other.asset.id].sort());
  });

  it('an output its owner deleted during the run is not matched again: the file is stored once more, and then found', async () => {
    const { ctx, metadata, claim } = await setup();
    const job = await claim();
    const run: RunOutputs = {};
    const first = await commitJobOutput(ctx, job, output(), run);
    expect(await metadata.deleteAsset('acc', first.asset.id, NOW)).toBe(true);
    const second = await commitJobOutput(ctx, job, output(), run);
    expect(second.created).toBe(true);
    expect(second.asset.id).not.toBe(first.asset.id);
    const third = await commitJobOutput(ctx, job, output(), run);
    expect(third).toMatchObject({ created: false, asset: { id: second.asset.id } });
    expect(await jobAssetIds(metadata)).toEqual([second.asset.id]);
  });

  it('a later attempt finds the outputs an earlier one committed', async () => {
    const { ctx, metadata, claim } = await setup();
    const job = await claim();
    const first = await commitJobOutput(ctx, job, output(), {});
    // The run ends without finishing (a shutdown requeues it); the next claim is attempt 2.
    expect(
      await metadata.transitionJob(job.id, 'running', 'queued', { started_at: null, lease: null }, { lease_token: job.lease!.token }),
    ).toBeTruthy();
    const retried: JobSummary = await claim();
    expect(retried.attempts).toBe(2);
    const again = await commitJobOutput(ctx, retried, output(), {});
    expect(again).toMatchObject({ created: false, asset: { id: first.asset.id } });
    expect(await jobAssetIds(metadata)).toEqual([first.asset.id]);
  });
});
