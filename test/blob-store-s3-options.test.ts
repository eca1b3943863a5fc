// How the S3 blob store is configured: the AWS environment variables, the
// s3:// URL, defaults and refusals, and where that puts the objects (seen in
// presigned URLs, which are made without a request).
import { describe, expect, it } from 'vitest';
import { createS3BlobStore, parseBlobsUrl, s3OptionsFromEnv } from '../storage/s3/blob-store.ts';

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' };

describe('s3OptionsFromEnv', () => {
  it('reads credentials, region and endpoint from the standard variables', () => {
    const env = {
      AWS_ACCESS_KEY_ID: 'AKID',
      AWS_SECRET_ACCESS_KEY: 'SECRET',
      AWS_SESSION_TOKEN: 'TOKEN',
      AWS_REGION: 'eu-west-3',
      AWS_DEFAULT_REGION: 'us-west-2',
      AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9000',
      AWS_ENDPOINT_URL: 'http://127.0.0.1:4566',
    };
    expect(s3OptionsFromEnv(env)).toEqual({
      credentials: { accessKeyId: 'AKID', secretAccessKey: 'SECRET', sessionToken: 'TOKEN' },
      region: 'eu-west-3',
      endpoint: 'http://127.0.0.1:9000',
    });
  });

  it('falls back to AWS_DEFAULT_REGION and AWS_ENDPOINT_URL, and leaves out what is unset or empty', () => {
    expect(s3OptionsFromEnv({ AWS_DEFAULT_REGION: 'us-west-2', AWS_ENDPOINT_URL: 'http://localhost:4566', AWS_REGION: '' })).toEqual({
      region: 'us-west-2',
      endpoint: 'http://localhost:4566',
    });
    expect(s3OptionsFromEnv({ AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'S', AWS_SESSION_TOKEN: '' })).toEqual({
      credentials: { accessKeyId: 'AKID', secretAccessKey: 'S' },
    });
    expect(s3OptionsFromEnv({ AWS_ACCESS_KEY_ID: 'AKID' })).toEqual({}); // a key id without its secret is nothing
    expect(s3OptionsFromEnv({})).toEqual({});
  });
});

describe('parseBlobsUrl', () => {
  it('splits an s3:// URL into bucket and a folder-like prefix', () => {
    expect(parseBlobsUrl('s3://my-bucket')).toEqual({ bucket: 'my-bucket', prefix: '' });
    expect(parseBlobsUrl('s3://my-bucket/')).toEqual({ bucket: 'my-bucket', prefix: '' });
    expect(parseBlobsUrl('s3://my-bucket/blobs')).toEqual({ bucket: 'my-bucket', prefix: 'blobs/' });
    expect(parseBlobsUrl('s3://my.bucket.01/graphrun/blobs/')).toEqual({ bucket: 'my.bucket.01', prefix: 'graphrun/blobs/' });
    expect(parseBlobsUrl('S3://my-bucket/x')).toEqual({ bucket: 'my-bucket', prefix: 'x/' });
  });

  it('refuses what is no bucket URL', () => {
    const bad = [
      '',
      'my-bucket/x',
      'https://my-bucket/x',
      's3://',
      's3://My_Bucket',
      's3://ab',
      's3://b-b/a//b',
      's3://b-b/a/../b',
      's3://b-b/x?y',
      's3://b-b/x#y',
    ];
    for (const url of bad) expect(() => parseBlobsUrl(url), url).toThrow(TypeError);
  });
});

describe('createS3BlobStore options', () => {
  const signedPath = async (options: Parameters<typeof createS3BlobStore>[0]) => {
    const url = new URL(await (await createS3BlobStore(options)).signedUrl('abcd1234', { expiresInSeconds: 60 }));
    return { origin: url.origin, path: url.pathname, credential: url.searchParams.get('X-Amz-Credential') };
  };

  it('addresses AWS virtual-hosted by default, path style when asked or where a host name cannot carry the bucket', async () => {
    expect(await signedPath({ bucket: 'bkt', region: 'eu-west-1', credentials })).toEqual({
      origin: 'https://bkt.s3.eu-west-1.amazonaws.com',
      path: '/abcd1234',
      credential: expect.stringMatching(/^AKIDEXAMPLE\/\d{8}\/eu-west-1\/s3\/aws4_request$/),
    });
    expect(await signedPath({ bucket: 'bkt', prefix: 'a/b/', credentials, forcePathStyle: true })).toMatchObject({
      origin: 'https://s3.us-east-1.amazonaws.com',
      path: '/bkt/a/b/abcd1234',
    });
    expect(await signedPath({ bucket: 'bkt', credentials, endpoint: 'http://127.0.0.1:9000/' })).toMatchObject({
      origin: 'http://127.0.0.1:9000',
      path: '/bkt/abcd1234',
    });
    expect(await signedPath({ bucket: 'my.dotted.bkt', credentials, endpoint: 'https://storage.example/s3' })).toMatchObject({
      origin: 'https://storage.example',
      path: '/s3/my.dotted.bkt/abcd1234',
    });
    expect(await signedPath({ bucket: 'bkt', credentials, endpoint: 'https://account.r2.example' })).toMatchObject({
      origin: 'https://bkt.account.r2.example',
    });
  });

  it('fills credentials, region and endpoint from `env` when not given, the given ones winning', async () => {
    const env = { AWS_ACCESS_KEY_ID: 'ENVKEY', AWS_SECRET_ACCESS_KEY: 'x', AWS_REGION: 'ap-south-1', AWS_ENDPOINT_URL_S3: 'http://localhost:9000' };
    expect(await signedPath({ bucket: 'bkt', env })).toEqual({
      origin: 'http://localhost:9000',
      path: '/bkt/abcd1234',
      credential: expect.stringMatching(/^ENVKEY\/\d{8}\/ap-south-1\/s3\/aws4_request$/),
    });
    expect(await signedPath({ bucket: 'bkt', env, credentials, region: 'us-west-1', endpoint: 'http://127.0.0.1:1' })).toEqual({
      origin: 'http://127.0.0.1:1',
      path: '/bkt/abcd1234',
      credential: expect.stringMatching(/^AKIDEXAMPLE\/\d{8}\/us-west-1\//),
    });
  });

  it('a session token travels in the presigned URL', async () => {
    const store = await createS3BlobStore({ bucket: 'bkt', credentials: { ...credentials, sessionToken: 'TOKEN/+=' } });
    expect(new URL(await store.signedUrl('abcd1234', { expiresInSeconds: 60 })).searchParams.get('X-Amz-Security-Token')).toBe('TOKEN/+=');
  });

  it('refuses missing credentials, parts S3 would refuse and unusable names', async () => {
    await expect(createS3BlobStore({ bucket: 'bkt' })).rejects.toThrow(/credentials are required/);
    await expect(createS3BlobStore({ bucket: 'bkt', env: { AWS_ACCESS_KEY_ID: 'only-the-id' } })).rejects.toThrow(/credentials are required/);
    await expect(createS3BlobStore({ bucket: 'bkt', credentials, partSizeBytes: 5 * 1024 * 1024 - 1 })).rejects.toThrow(RangeError);
    await expect(createS3BlobStore({ bucket: 'bkt', credentials, maxKeys: 1001 })).rejects.toThrow(RangeError);
    await expect(createS3BlobStore({ bucket: 'b/k', credentials })).rejects.toThrow(TypeError);
    await expect(createS3BlobStore({ bucket: 'bkt', credentials, prefix: 'a/../b/' })).rejects.toThrow(TypeError);
    await expect(createS3BlobStore({ bucket: 'bkt', credentials, endpoint: 'ftp://example' })).rejects.toThrow(TypeError);
  });

  it('refuses keys that could name a temporary or another folder', async () => {
    const store = await createS3BlobStore({ bucket: 'bkt', credentials });
    for (const key of ['', 'abc', '.tmp/abcd', 'ab/cd/ef', '..', 'abcd.txt', 'x'.repeat(129)]) {
      await expect(store.get(key), key).rejects.toThrow(TypeError);
      await expect(store.has(key), key).rejects.toThrow(TypeError);
      await expect(store.delete(key), key).rejects.toThrow(TypeError);
      const writer = await store.begin();
      await expect(writer.commit(key), key).rejects.toThrow(TypeError);
      await writer.abort();
    }
  });
});
