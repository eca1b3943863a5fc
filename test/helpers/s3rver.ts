// A real S3-protocol server for the S3 blob store's tests: s3rver on a free
// port of 127.0.0.1 over a temporary directory, with one bucket, in a child
// process (see s3rver-main.mjs for why). Also a plain signed client, to look
// at the bucket the way an operator would (what objects and uploads are
// there), not through the store under test.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AwsClient } from 'aws4fetch';

/** s3rver's one built-in account. */
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface S3rverFixture {
  endpoint: string;
  bucket: string;
  /** Signed request to the bucket (path-style), e.g. `?list-type=2&prefix=x`. */
  request(pathAndQuery: string, init?: RequestInit): Promise<Response>;
  /** Every key under `prefix`, all pages, no delimiter (temporaries included). */
  keys(prefix: string): Promise<string[]>;
  close(): Promise<void>;
}

export async function startS3rver(bucket = 'graphrun-test'): Promise<S3rverFixture> {
  const directory = await mkdtemp(join(tmpdir(), 'graphrun-s3rver-'));
  const main = new URL('./s3rver-main.mjs', import.meta.url).pathname;
  const child = spawn(process.execPath, ['--openssl-legacy-provider', main, directory, bucket], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = once(child, 'exit');
  let out = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /^(\d+)\n/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    void exited.then(([code]) => reject(new Error(`s3rver exited (${code}) before listening: ${out}`)));
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new AwsClient({ ...S3RVER_CREDENTIALS, service: 's3', region: 'us-east-1', retries: 0 });
  const request = (pathAndQuery: string, init?: RequestInit) => client.fetch(`${endpoint}/${bucket}${pathAndQuery}`, init);
  return {
    endpoint,
    bucket,
    request,
    async keys(prefix) {
      const out: string[] = [];
      let token: string | null = null;
      do {
        const query = new URLSearchParams({ 'list-type': '2', prefix });
        if (token) query.set('continuation-token', token);
        const text = await (await request(`?${query}`)).text();
        // Test-side peek at a listing s3rver wrote: its keys are plain (the tests choose them).
        out.push(...[...text.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]));
        token = /<NextContinuationToken>([^<]*)<\/NextContinuationToken>/.exec(text)?.[1] ?? null;
      } while (token);
      return out;
    },
    async close() {
      child.stdin!.end();
      await exited;
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** The standard AWS variables pointing at this server, as an operator sets them for MinIO or the like. */
export function awsEnvOf(endpoint: string): Record<string, string> {
  return {
    AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    AWS_REGION: 'us-east-1',
    AWS_ENDPOINT_URL_S3: endpoint,
  };
}
