// Asset and blob cases of the MetadataStore conformance suite (see
// metadata-store.ts, which runs them against a fresh store per test).
import { beforeEach, describe, expect, it } from 'vitest';
import type { MetadataStore, NewAsset } from '../../storage/types.ts';
import { newAsset, T0 } from './store-fixtures.ts';

const hashOf = (key: string) => `blake3:${key}`;
const blob = (key: string, hash: string | null = hashOf(key), size = 10) => ({ key, hash, size });
const asset = newAsset;

export function assetCases(getStore: () => MetadataStore): void {
  describe('assets and blobs', () => {
    let store: MetadataStore;
    beforeEach(() => {
      store = getStore();
    });
    const commit = (id: string, blobKey: string, over: Partial<NewAsset> = {}) =>
      store.commitAsset(blob(blobKey), asset(id, blobKey, over));

    it('commitAsset stores the asset and takes hash and size from the blob', async () => {
      const input = asset('a1', 'b1', { tags: ['x', 'y'], file_path: 'in/cat.png', job_id: 'j1', expires_at: T0 + 5000 });
      const { asset: stored, blob_created } = await store.commitAsset(blob('b1', hashOf('b1'), 42), input);
      expect(blob_created).toBe(true);
      expect(stored).toEqual({ ...input, hash: hashOf('b1'), size_bytes: 42, node_id: null, output_type: null });
      expect(await store.getAsset('acc1', 'a1', T0)).toEqual(stored);
      expect(await store.findBlobByHash(hashOf('b1'))).toEqual({ key: 'b1', hash: hashOf('b1'), size: 42, created_at: expect.any(Number) });
      expect(await store.findBlobByHash('blake3:unknown')).toBeNull();
    });

    it('keeps a job output\'s node and kind', async () => {
      const { asset: stored } = await commit('a1', 'b1', { job_id: 'j1', node_id: '9', output_type: 'image' });
      expect(stored).toMatchObject({ job_id: 'j1', node_id: '9', output_type: 'image' });
      expect(await store.getAsset('acc1', 'a1', T0)).toMatchObject({ node_id: '9', output_type: 'image' });
      expect(await store.listJobAssets('acc1', 'j1')).toMatchObject([{ id: 'a1', node_id: '9', output_type: 'image' }]);
    });

    it('findAssetByPath returns the account\'s newest live asset with that path', async () => {
      await commit('a1', 'b1', { file_path: 'in/cat.png', created_at: T0 });
      await commit('a2', 'b2', { file_path: 'in/cat.png', created_at: T0 + 10 });
      await commit('a3', 'b3', { file_path: 'in/cat.png', created_at: T0 + 20, expires_at: T0 + 30 });
      await commit('o1', 'b4', { file_path: 'in/cat.png', created_at: T0 + 40, account_id: 'acc2' });
      expect((await store.findAssetByPath('acc1', 'in/cat.png', T0 + 25))?.id).toBe('a3');
      // a3 expired: the next newest is the answer.
      expect((await store.findAssetByPath('acc1', 'in/cat.png', T0 + 30))?.id).toBe('a2');
      expect(await store.findAssetByPath('acc1', 'in/dog.png', T0)).toBeNull();
      await store.deleteAsset('acc1', 'a2', T0 + 30);
      expect((await store.findAssetByPath('acc1', 'in/cat.png', T0 + 30))?.id).toBe('a1');
      expect((await store.findAssetByPath('acc2', 'in/cat.png', T0 + 30))?.id).toBe('o1');
    });

    it('a second commit over the same blob reuses its row', async () => {
      expect((await commit('a1', 'b1')).blob_created).toBe(true);
      const second = await store.commitAsset(blob('b1', hashOf('b1'), 999), asset('a2', 'b1'));
      expect(second.blob_created).toBe(false);
      expect(second.asset.size_bytes).toBe(10); // the existing row's size, not the caller's
      await store.deleteAsset('acc1', 'a1', T0);
      await store.deleteAsset('acc1', 'a2', T0);
      expect(await store.listUnreferencedBlobs(10)).toEqual(['b1']); // one row, not two
    });

    it('blockBlob deletes every account\'s assets over the blob and remembers the block', async () => {
      await commit('a1', 'b1');
      await commit('a2', 'b1', { account_id: 'acc2' });
      await commit('a3', 'b2');
      expect(await store.isBlobBlocked('b1')).toBe(false);
      expect((await store.blockBlob('b1', 'malware', T0)).sort()).toEqual(['a1', 'a2']);
      expect(await store.isBlobBlocked('b1')).toBe(true);
      expect(await store.isBlobBlocked('b2')).toBe(false);
      expect(await store.getAsset('acc2', 'a2', T0)).toBeNull();
      expect(await store.getAsset('acc1', 'a3', T0)).not.toBeNull();
      expect(await store.deleteBlobIfUnreferenced('b1')).toBe(true);
      expect(await store.isBlobBlocked('b1')).toBe(true); // outlives the blob row
      expect(await store.blockBlob('b1', 'again', T0)).toEqual([]);
    });

    it('concurrent commits of one new blob create it exactly once', async () => {
      const results = await Promise.all(['a1', 'a2', 'a3', 'a4', 'a5'].map((id) => commit(id, 'b1')));
      expect(results.filter((r) => r.blob_created)).toHaveLength(1);
      for (const id of ['a1', 'a2', 'a3', 'a4', 'a5']) expect(await store.getAsset('acc1', id, T0)).not.toBeNull();
    });

    it('a failed commit leaves no blob row behind', async () => {
      await commit('a1', 'b1');
      await expect(commit('a1', 'b2')).rejects.toThrow(); // duplicate asset id
      await expect(store.commitAsset(blob('b3', hashOf('b1')), asset('a3', 'b3'))).rejects.toThrow(); // hash taken
      expect(await store.findBlobByHash(hashOf('b2'))).toBeNull();
      expect(await store.listUnreferencedBlobs(10)).toEqual([]);
    });

    it('getAsset sees live assets only, of the caller account only', async () => {
      await commit('a1', 'b1', { expires_at: T0 + 1000 });
      expect(await store.getAsset('acc1', 'a1', T0 + 999)).not.toBeNull();
      expect(await store.getAsset('acc1', 'a1', T0 + 1000)).toBeNull(); // expiry is inclusive
      expect(await store.getAsset('acc2', 'a1', T0)).toBeNull();
      expect(await store.getAsset('acc1', 'missing', T0)).toBeNull();
    });

    it('deleteAsset deletes a live asset of the account once', async () => {
      await commit('a1', 'b1');
      await commit('a2', 'b1', { expires_at: T0 });
      expect(await store.deleteAsset('acc2', 'a1', T0)).toBe(false);
      expect(await store.deleteAsset('acc1', 'a1', T0)).toBe(true);
      expect(await store.deleteAsset('acc1', 'a1', T0)).toBe(false);
      expect(await store.getAsset('acc1', 'a1', T0)).toBeNull();
      expect(await store.deleteAsset('acc1', 'a2', T0)).toBe(false); // expired counts as gone
    });

    it('listAssetsByHash: live assets of the account, newest first', async () => {
      await commit('old', 'b1', { created_at: T0 });
      await commit('newest', 'b1', { created_at: T0 + 2 });
      await commit('middle', 'b1', { created_at: T0 + 1 });
      await commit('expired', 'b1', { created_at: T0 + 3, expires_at: T0 + 5 });
      await commit('foreign', 'b1', { created_at: T0 + 4, account_id: 'acc2' });
      await commit('elsewhere', 'b2', { created_at: T0 + 5 });
      const list = await store.listAssetsByHash('acc1', hashOf('b1'), T0 + 10);
      expect(list.map((a) => a.id)).toEqual(['newest', 'middle', 'old']);
      expect(list[0]).toMatchObject({ hash: hashOf('b1'), size_bytes: 10 });
      expect(await store.listAssetsByHash('acc1', 'blake3:none', T0)).toEqual([]);
    });

    it('deleteExpiredAssets removes expired assets up to the limit and returns their blob keys', async () => {
      await commit('e1', 'b1', { expires_at: T0 + 10 });
      await commit('e2', 'b2', { expires_at: T0 + 20 });
      await commit('e3', 'b3', { expires_at: T0 + 30 });
      await commit('live', 'b1', { expires_at: T0 + 1000 });
      await commit('forever', 'b4');
      const first = await store.deleteExpiredAssets(T0 + 100, 2);
      expect(first).toHaveLength(2);
      const rest = await store.deleteExpiredAssets(T0 + 100, 10);
      expect([...first, ...rest].sort()).toEqual(['b1', 'b2', 'b3']);
      expect(await store.deleteExpiredAssets(T0 + 100, 10)).toEqual([]);
      expect(await store.getAsset('acc1', 'live', T0 + 100)).not.toBeNull();
      expect(await store.getAsset('acc1', 'forever', T0 + 100)).not.toBeNull();
      expect((await store.listUnreferencedBlobs(10)).sort()).toEqual(['b2', 'b3']);
    });

    it('deletes a blob row only while unreferenced', async () => {
      await commit('a1', 'b1');
      expect(await store.listUnreferencedBlobs(10)).toEqual([]);
      expect(await store.deleteBlobIfUnreferenced('b1')).toBe(false);
      await store.deleteAsset('acc1', 'a1', T0);
      expect(await store.listUnreferencedBlobs(10)).toEqual(['b1']);
      expect(await store.deleteBlobIfUnreferenced('b1')).toBe(true);
      expect(await store.deleteBlobIfUnreferenced('b1')).toBe(false);
      expect(await store.findBlobByHash(hashOf('b1'))).toBeNull();
      for (const k of ['c1', 'c2', 'c3']) {
        await commit(`asset-${k}`, k);
        await store.deleteAsset('acc1', `asset-${k}`, T0);
      }
      expect(await store.listUnreferencedBlobs(2)).toHaveLength(2);
    });

    it('a lazily computed hash becomes visible through every asset', async () => {
      const { asset: a } = await store.commitAsset(blob('b1', null), asset('a1', 'b1'));
      expect(a.hash).toBeNull();
      await store.setBlobHash('b1', hashOf('b1'));
      expect((await store.getAsset('acc1', 'a1', T0))?.hash).toBe(hashOf('b1'));
      expect((await store.listAssetsByHash('acc1', hashOf('b1'), T0)).map((x) => x.id)).toEqual(['a1']);
      expect((await store.findBlobByHash(hashOf('b1')))?.key).toBe('b1');
    });
  });
}
