// AssetStore conformance: asset records over shared blob rows, what each
// account sees of them (live = not expired at `now`), job outputs, and lazily
// computed hashes. The sweep's and the scanner's removals are in
// asset-store-cleanup.ts, run from here.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AssetStore, NewAsset } from '../../storage/types.ts';
import { assetCleanupCases } from './asset-store-cleanup.ts';
import { blob, hashOf, type MakeStore, newAsset, T0 } from './store-fixtures.ts';

const asset = newAsset;
/** An asset over a blob of its own, named after it. */
const jobAsset = (id: string, over: Partial<NewAsset> = {}) => newAsset(id, `blob-${id}`, over);

export function assetStoreSuite(make: MakeStore<AssetStore>): void {
  describe('AssetStore', () => {
    let store: AssetStore;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      ({ store, cleanup } = await make());
    });
    afterEach(() => cleanup());
    const commit = (id: string, blobKey: string, over: Partial<NewAsset> = {}) => store.commitAsset(blob(blobKey), asset(id, blobKey, over));

    it('commitAsset stores the asset and takes hash and size from the blob', async () => {
      const input = asset('a1', 'b1', { tags: ['x', 'y'], file_path: 'in/cat.png', job_id: 'j1', expires_at: T0 + 5000 });
      const { asset: stored, blob_created } = await store.commitAsset(blob('b1', hashOf('b1'), 42), input);
      expect(blob_created).toBe(true);
      expect(stored).toEqual({ ...input, hash: hashOf('b1'), size_bytes: 42, node_id: null, output_type: null });
      expect(await store.getAsset('acc1', 'a1', T0)).toEqual(stored);
      expect(await store.findBlobByHash(hashOf('b1'))).toEqual({ key: 'b1', hash: hashOf('b1'), size: 42, created_at: expect.any(Number) });
      expect(await store.findBlobByHash('blake3:unknown')).toBeNull();
    });

    it("keeps a job output's node and kind", async () => {
      const { asset: stored } = await commit('a1', 'b1', { job_id: 'j1', node_id: '9', output_type: 'image' });
      expect(stored).toMatchObject({ job_id: 'j1', node_id: '9', output_type: 'image' });
      expect(await store.getAsset('acc1', 'a1', T0)).toMatchObject({ node_id: '9', output_type: 'image' });
      expect(await store.listJobAssets('acc1', 'j1')).toMatchObject([{ id: 'a1', node_id: '9', output_type: 'image' }]);
    });

    it("findAssetByPath returns the account's newest live asset with that path", async () => {
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

    it('a lazily computed hash becomes visible through every asset', async () => {
      const { asset: a } = await store.commitAsset(blob('b1', null), asset('a1', 'b1'));
      expect(a.hash).toBeNull();
      await store.setBlobHash('b1', hashOf('b1'));
      expect((await store.getAsset('acc1', 'a1', T0))?.hash).toBe(hashOf('b1'));
      expect((await store.listAssetsByHash('acc1', hashOf('b1'), T0)).map((x) => x.id)).toEqual(['a1']);
      expect((await store.findBlobByHash(hashOf('b1')))?.key).toBe('b1');
    });

    it("listJobAssets: the job's assets of that account, in commit order", async () => {
      // No job row: the outputs are found by the assets' job_id alone.
      const commitOne = (a: NewAsset) => store.commitAsset({ key: a.blob_key, hash: `blake3:${a.blob_key}`, size: 3 }, a);
      // ids deliberately sort against commit order, so only the order of commits can pass.
      await commitOne(jobAsset('z-first', { job_id: 'j1', created_at: T0 + 1 }));
      await commitOne(jobAsset('m-second', { job_id: 'j1', created_at: T0 + 2 }));
      await commitOne(jobAsset('a-third', { job_id: 'j1', created_at: T0 + 3 }));
      await commitOne(jobAsset('other-job', { job_id: 'j2', created_at: T0 + 4 }));
      await commitOne(jobAsset('foreign', { job_id: 'j1', account_id: 'acc2', created_at: T0 + 5 }));
      await commitOne(jobAsset('no-job', { created_at: T0 + 6 }));
      const list = await store.listJobAssets('acc1', 'j1');
      expect(list.map((a) => a.id)).toEqual(['z-first', 'm-second', 'a-third']);
      expect(list[0]).toMatchObject({ job_id: 'j1', hash: 'blake3:blob-z-first', size_bytes: 3 });
      expect((await store.listJobAssets('acc2', 'j1')).map((a) => a.id)).toEqual(['foreign']);
      expect(await store.listJobAssets('acc1', 'missing')).toEqual([]);
    });

    it('setBlobHash refuses a hash another blob has, and ignores an unknown key', async () => {
      await commit('a1', 'b1');
      await store.commitAsset(blob('b2', null), asset('a2', 'b2'));
      await expect(store.setBlobHash('b2', hashOf('b1'))).rejects.toThrow();
      expect((await store.getAsset('acc1', 'a2', T0))?.hash).toBeNull();
      expect((await store.findBlobByHash(hashOf('b1')))?.key).toBe('b1');
      await store.setBlobHash('missing', hashOf('missing'));
      expect(await store.findBlobByHash(hashOf('missing'))).toBeNull();
    });

    assetCleanupCases(() => store);
  });
}
