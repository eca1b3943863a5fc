// StoreLifecycle conformance: migrate at every start.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SettingsStore, StoreLifecycle } from '../../storage/types.ts';
import type { MakeStore } from './store-fixtures.ts';

/** Settings show that the schema is usable after migrating. */
export function lifecycleSuite(make: MakeStore<StoreLifecycle & SettingsStore>): void {
  describe('StoreLifecycle', () => {
    let store: StoreLifecycle & SettingsStore;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      ({ store, cleanup } = await make());
    });
    afterEach(() => cleanup());

    it('migrate is safe to run again', async () => {
      await store.migrate();
      await store.migrate();
      expect(await store.getSetting('missing')).toBeNull();
    });
  });
}
