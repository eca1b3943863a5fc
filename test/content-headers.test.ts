// Content responses as a browser or cache sees them: sandboxed, revalidated
// with weak and wildcard If-None-Match, and signed links only in canonical form.
import { describe, expect, it } from 'vitest';
import { createService, silentLogger } from '../index.ts';
import { createMemoryStorage } from '../storage/memory/index.ts';

async function uploaded() {
  const service = await createService({ storage: createMemoryStorage(), logger: silentLogger, sweepIntervalMs: 0, token: 't' });
  const form = new FormData();
  form.set('file', new Blob(['<script>alert(1)</script>']), 'x.html');
  form.set('content_type', 'text/html');
  form.set('file_path', 'x.html');
  const auth = { authorization: 'Bearer t' };
  const res = await service.fetch(new Request('http://svc/api/v2/assets', { method: 'POST', body: form, headers: auth }));
  const asset = (await res.json()) as { id: string; url: string; hash: string };
  const get = (headers: Record<string, string> = {}) =>
    service.fetch(new Request(`http://svc/api/v2/assets/${asset.id}/content`, { headers: { ...auth, ...headers } }));
  return { service, asset, get };
}

describe('content response headers', () => {
  it('serves uploaded HTML sandboxed and unsniffed', async () => {
    const { service, get } = await uploaded();
    const res = await get();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html');
    expect(res.headers.get('content-security-policy')).toContain('sandbox');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    await service.close();
  });

  it('answers 304 to a weak or wildcard If-None-Match and 200 to another tag', async () => {
    const { service, asset, get } = await uploaded();
    const etag = `"${asset.hash.slice('blake3:'.length)}"`;
    expect((await get({ 'if-none-match': `W/${etag}` })).status).toBe(304);
    expect((await get({ 'if-none-match': '*' })).status).toBe(304);
    expect((await get({ 'if-none-match': `"other", ${etag}` })).status).toBe(304);
    expect((await get({ 'if-none-match': '"other"' })).status).toBe(200);
    await service.close();
  });

  it('accepts the signed link as issued and refuses a non-canonical spelling of its signature', async () => {
    const { service, asset } = await uploaded();
    expect((await service.fetch(new Request(asset.url))).status).toBe(200);
    const url = new URL(asset.url);
    const sig = url.searchParams.get('sig')!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    // The last of 43 characters carries 4 bits of the MAC and 2 unused bits.
    const last = alphabet.indexOf(sig.at(-1)!);
    url.searchParams.set('sig', sig.slice(0, -1) + alphabet[last ^ 1]);
    const res = await service.fetch(new Request(url));
    expect(res.status).toBe(403);
    expect(((await res.json()) as any).error.code).toBe('forbidden');
    await service.close();
  });
});
