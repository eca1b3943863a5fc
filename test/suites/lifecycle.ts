// StoreLifecycle conformance: migrate at every start without losing data,
// close as often as the owners of a store call it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SettingsStore, StoreLifecycle } from '../../storage/types.ts';
import type { MakeStore } from './store-fixtures.ts';

/** Settings stand in for "some data" that a migration must keep. */
export function lifecycleSuite(make: MakeStore<StoreLifecycle & SettingsStore>): void {
  describe('StoreLifecycle', () => {
    let store: StoreLifecycle & SettingsStore;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      ({ store, cleanup } = await make());
    });
    afterEach(() => cleanup());

    it('migrate is safe to run again', async () => {
      await store.initSetting('kept', 'v');
      await store.migrate();
      await store.migrate();
      expect(await store.getSetting('kept')).toBe('v');
      expect(await store.getSetting('missing')).toBeNull();
    });

    it('ping answers while the store is open and fails once it is closed', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
      await store.close();
      await expect(store.ping()).rejects.toThrow();
    });

    // createService and the storage's own close() may both close the store;
    // a backend whose client refuses a second close (pg's Pool.end) must guard it.
    it('close may be called more than once', async () => {
      await store.close();
      await expect(store.close()).resolves.toBeUndefined();
    });
  });
}
