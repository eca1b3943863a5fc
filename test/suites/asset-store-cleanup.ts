// AssetStore conformance, the removals no owner's request makes: blocking a
// blob (every account's assets over it go), the sweep of expired assets and of
// blob rows nothing references any more. Run from asset-store.ts.
import { beforeEach, describe, expect, it } from 'vitest';
import type { AssetStore, NewAsset } from '../../storage/types.ts';
import { blob, hashOf, newAsset, T0 } from './store-fixtures.ts';

export function assetCleanupCases(getStore: () => AssetStore): void {
  describe('blocking and sweeping', () => {
    let store: AssetStore;
    beforeEach(() => {
      store = getStore();
    });
    const commit = (id: string, blobKey: string, over: Partial<NewAsset> = {}) => store.commitAsset(blob(blobKey), newAsset(id, blobKey, over));

    it("blockBlob deletes every account's assets over the blob and remembers the block", async () => {
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

    it('knownBlobKeys names the keys that have a blob row, referenced or not', async () => {
      await commit('a1', 'b1');
      await commit('a2', 'b2');
      await store.deleteAsset('acc1', 'a2', T0);
      expect((await store.knownBlobKeys(['b1', 'b2', 'nope', '__proto__'])).sort()).toEqual(['b1', 'b2']);
      expect(await store.knownBlobKeys([])).toEqual([]);
      await store.deleteBlobIfUnreferenced('b2');
      expect(await store.knownBlobKeys(['b2'])).toEqual([]);
    });
  });
}
