// Service-level behaviour beyond single routes: the served OpenAPI document
// matches real responses, and assets whose hash is computed lazily.

import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { JobSchema } from '../core/jobs/job-schema.ts';
import { AssetSchema } from '../core/schemas.ts';
import { createService, silentLogger } from '../index.ts';
import { createMemoryStorage } from '../storage/memory/index.ts';

async function setup() {
  const storage = createMemoryStorage();
  const service = await createService({ storage, logger: silentLogger, sweepIntervalMs: 0 });
  return { storage, service, get: (path: string, init?: RequestInit) => service.fetch(new Request(`http://svc${path}`, init)) };
}

describe('OpenAPI document', () => {
  it('documents every route and the exact Asset fields a real upload returns', async () => {
    const { service, get } = await setup();
    const res = await get('/api/v2/openapi.json');
    expect(res.status).toBe(200);
    const doc = (await res.json()) as any;
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/api/v2/assets',
      '/api/v2/assets/by-hash/{hash}',
      '/api/v2/assets/from-hash',
      '/api/v2/assets/{id}',
      '/api/v2/assets/{id}/content',
      '/api/v2/jobs',
      '/api/v2/jobs/{id}',
      '/api/v2/jobs/{id}/cancel',
      '/api/v2/jobs/{id}/events',
      '/api/v2/jobs/{id}/workflow',
      '/api/v2/openapi.json',
    ]);
    expect(Object.keys(doc.paths['/api/v2/assets/{id}']).sort()).toEqual(['delete', 'get']);

    const form = new FormData();
    form.set('file', new Blob(['bytes']), 'x.bin');
    form.set('content_type', 'application/octet-stream');
    form.set('file_path', 'x.bin');
    const created = await get('/api/v2/assets', { method: 'POST', body: form });
    const body = (await created.json()) as Record<string, unknown>;
    expect(v.safeParse(AssetSchema, body).success).toBe(true);
    const documented = Object.keys(doc.components.schemas.Asset.properties);
    for (const key of Object.keys(body)) expect(documented).toContain(key);
    expect(doc.components.schemas.Asset.required).toEqual(
      expect.arrayContaining(['id', 'hash', 'size_bytes', 'content_type', 'created_at', 'url', 'url_expires_at']),
    );
    await service.close();
  });

  it('documents the exact Job fields a finished job with an output returns', async () => {
    const { service, get } = await setup();
    const doc = (await (await get('/api/v2/openapi.json')).json()) as any;
    const workflow = {
      img: { class_type: 'EmptyImage', inputs: { width: 4, height: 4, batch_size: 1, color: 0 } },
      save: { class_type: 'SaveImage', inputs: { images: ['img', 0], filename_prefix: 'doc' } },
    };
    const created = await get('/api/v2/jobs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    let body: any;
    for (let i = 0; i < 200; i++) {
      body = await (await get(`/api/v2/jobs/${id}`)).json();
      if (body.status === 'succeeded') break;
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(body.status).toBe('succeeded');
    expect(body.outputs).toHaveLength(1);
    expect(v.safeParse(JobSchema, body).issues).toBeUndefined();
    const schemas = doc.components.schemas;
    for (const key of Object.keys(body)) expect(Object.keys(schemas.Job.properties)).toContain(key);
    for (const key of Object.keys(body.outputs[0])) expect(Object.keys(schemas.Output.properties)).toContain(key);
    for (const key of Object.keys(body.progress)) expect(Object.keys(schemas.Progress.properties)).toContain(key);
    expect(doc.paths['/api/v2/jobs'].post.responses['201'].content['application/json'].schema.$ref).toBe('#/components/schemas/Job');
    await service.close();
  });

  it('documents the additions: the listing and its page, priority and metadata on submission, and the fields they add to the Job', async () => {
    const { service, get } = await setup();
    const doc = (await (await get('/api/v2/openapi.json')).json()) as any;
    const listing = doc.paths['/api/v2/jobs'].get;
    expect(listing.operationId).toBe('listJobs');
    expect(listing.parameters.map((p: any) => p.name)).toEqual(['status', 'limit', 'cursor']);
    expect(listing.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/JobList');
    expect(doc.components.schemas.JobList.properties.jobs.items.$ref).toBe('#/components/schemas/Job');
    expect(doc.components.schemas.JobList.required).toEqual(['jobs', 'next_cursor']);
    const submission = doc.paths['/api/v2/jobs'].post.requestBody.content['application/json'].schema;
    expect(submission.properties.priority).toMatchObject({ minimum: -1_000_000, maximum: 1_000_000 });
    expect(submission.properties.metadata).toMatchObject({ type: 'object' });
    expect(submission.required).toEqual(['workflow']);
    const job = doc.components.schemas.Job;
    expect(job.properties.priority.type).toBe('integer');
    expect(job.properties.outputs_reused.type).toBe('boolean');
    expect(job.properties.outputs_reused.description).toMatch(/earlier run/);
    expect(job.required).toEqual(expect.arrayContaining(['priority', 'metadata', 'outputs_reused']));
    // One page as served matches what is documented.
    const res = await get('/api/v2/jobs');
    const page = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(page).sort()).toEqual(Object.keys(doc.components.schemas.JobList.properties).sort());
    await service.close();
  });
});

describe('lazily computed hash', () => {
  it('serves an asset whose hash is null, then shows the hash once it is filled in', async () => {
    const { storage, service, get } = await setup();
    const writer = await storage.blobs.begin();
    await writer.write(new TextEncoder().encode('lazy bytes'));
    await writer.commit('lazyblob01');
    const id = crypto.randomUUID();
    await storage.metadata.commitAsset(
      { key: 'lazyblob01', hash: null, size: 10 },
      {
        id,
        account_id: 'local',
        blob_key: 'lazyblob01',
        content_type: 'text/plain',
        file_path: 'lazy.txt',
        tags: [],
        created_at: Date.now(),
        expires_at: null,
        job_id: 'job-1',
      },
    );
    const before = (await (await get(`/api/v2/assets/${id}`)).json()) as any;
    expect(before.hash).toBeNull();
    expect(before.job_id).toBe('job-1');
    expect(v.safeParse(AssetSchema, before).success).toBe(true);
    const content = await get(`/api/v2/assets/${id}/content`);
    expect(content.status).toBe(200);
    expect(content.headers.get('etag')).toBeNull();
    expect(await content.text()).toBe('lazy bytes');

    const hash = `blake3:${'ab'.repeat(32)}`;
    await storage.metadata.setBlobHash('lazyblob01', hash);
    const after = (await (await get(`/api/v2/assets/${id}`)).json()) as any;
    expect(after.hash).toBe(hash);
    await service.close();
  });
});

describe('hasher option', () => {
  it('uses the supplied blake3 hasher for uploads, and a failing one stores nothing', async () => {
    const { createHasher } = await import('../lib/blake3.ts');
    let bytesSeen = 0;
    let fail = false;
    const storage = createMemoryStorage();
    const service = await createService({
      storage,
      logger: silentLogger,
      sweepIntervalMs: 0,
      hasher: async () => {
        const inner = await createHasher();
        return {
          update: (chunk) => {
            bytesSeen += chunk.length;
            return inner.update(chunk);
          },
          digest: () => (fail ? Promise.reject(new Error('hasher down')) : inner.digest()),
        };
      },
    });
    const upload = () => {
      const form = new FormData();
      form.set('file', new Blob(['counted bytes']), 'c.bin');
      form.set('content_type', 'application/octet-stream');
      form.set('file_path', 'c.bin');
      return service.fetch(new Request('http://svc/api/v2/assets', { method: 'POST', body: form }));
    };
    const ok = await upload();
    expect(ok.status).toBe(201);
    expect(bytesSeen).toBe('counted bytes'.length);
    const asset = (await ok.json()) as { hash: string };
    expect(asset.hash).toMatch(/^blake3:[0-9a-f]{64}$/);

    fail = true;
    const failed = await upload();
    expect(failed.status).toBe(500);
    expect(((await failed.json()) as any).error.code).toBe('upstream_error');
    expect(await storage.metadata.listUnreferencedBlobs(10)).toEqual([]);
    await service.close();
  });
});

describe('close', () => {
  it('lets a request under way finish before the stores close, and refuses new ones with 503', async () => {
    const { service, get } = await setup();
    const enc = new TextEncoder();
    const head = enc.encode(
      '--b\r\nContent-Disposition: form-data; name="content_type"\r\n\r\ntext/plain\r\n' +
        '--b\r\nContent-Disposition: form-data; name="file_path"\r\n\r\nslow.txt\r\n' +
        '--b\r\nContent-Disposition: form-data; name="file"; filename="slow.txt"\r\n\r\nslow ',
    );
    let finish!: () => void;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(head);
        finish = () => {
          c.enqueue(enc.encode('bytes\r\n--b--\r\n'));
          c.close();
        };
      },
    });
    const uploading = get('/api/v2/assets', {
      method: 'POST',
      body,
      headers: { 'content-type': 'multipart/form-data; boundary=b' },
      duplex: 'half',
    } as RequestInit);
    await new Promise((r) => setTimeout(r, 20));
    let closed = false;
    const closing = service.close().then(() => (closed = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(closed).toBe(false);
    const refused = await get('/api/v2/openapi.json');
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as any).error.code).toBe('upstream_error');
    finish();
    const res = await uploading;
    expect(res.status).toBe(201);
    await closing;
    expect(closed).toBe(true);
  });
});
