// A whole service on PostgreSQL (test/helpers/postgres.ts starts the server):
// filesystem blobs under createPostgresStorage, the in-process engine, and
// the v2 flow a user runs: upload a PNG, submit a job over it, watch it end,
// fetch its output. Then the rows are where a second instance would look.
import { afterEach, describe, expect, it } from 'vitest';
import { LOCAL_ACCOUNT } from '../core/auth.ts';
import { decodePngRgba8 } from '../lib/png/decode.ts';
import { createMemoryBlobStore } from '../storage/memory/index.ts';
import { createPostgresStorage } from '../storage/sql/postgres.ts';
import { bytesOf, upload } from './helpers/assets.ts';
import { makePng } from './helpers/cloud-files.ts';
import { type Harness, MODES, startHarness } from './helpers/harness.ts';
import { assetRef, jobNow, submitOk } from './helpers/jobs.ts';
import { usePostgres } from './helpers/postgres.ts';
import { openEvents } from './helpers/sse-client.ts';

const server = usePostgres();

describe.each(MODES)('a service on PostgreSQL (%s)', (mode) => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('uploads an asset, runs a job over it to success and serves its output; a second storage on the database sees both', async () => {
    const connectionString = await server.newDatabase();
    h = await startHarness(mode, {}, (blobs) => createPostgresStorage({ connectionString, blobs }));
    const png = makePng(2, 1, 3, (x) => (x === 0 ? [10, 20, 30] : [200, 100, 0]));
    const up = await upload(h, png, { content_type: 'image/png', file_path: 'in.png' });
    expect(up.res.status, JSON.stringify(up.body)).toBe(201);

    const submitted = await submitOk(h, {
      l: { class_type: 'LoadImage', inputs: { image: assetRef(up.body.id) } },
      i: { class_type: 'ImageInvert', inputs: { image: ['l', 0] } },
      s: { class_type: 'SaveImage', inputs: { images: ['i', 0], filename_prefix: 'inv' } },
    });
    // The event stream ends after the terminal status; the row is the truth then.
    const { sse } = await openEvents(h, submitted.id);
    await sse!.readToEnd(20_000);
    const job = await jobNow(h, submitted.id);
    expect({ status: job.status, error: job.error }).toEqual({ status: 'succeeded', error: null });
    expect(job.outputs).toHaveLength(1);
    const output = decodePngRgba8(await bytesOf(await h.fetch(job.outputs[0].url)));
    expect([...output.data]).toEqual([245, 235, 225, 255, 55, 155, 255, 255]);

    // What another instance on the same database reads (blobs aside): the asset, the job and its output.
    const other = await createPostgresStorage({ connectionString, blobs: createMemoryBlobStore() });
    try {
      const now = Date.now();
      expect(await other.metadata.getAsset(LOCAL_ACCOUNT, up.body.id, now)).toMatchObject({ size_bytes: png.length, file_path: 'in.png' });
      expect(await other.metadata.getJobById(submitted.id)).toMatchObject({ status: 'succeeded', attempts: 1 });
      expect((await other.metadata.listJobAssets(LOCAL_ACCOUNT, submitted.id)).map((a) => a.id)).toEqual([job.outputs[0].id]);
    } finally {
      await other.metadata.close();
    }
  });
});
