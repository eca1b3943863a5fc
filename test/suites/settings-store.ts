// SettingsStore conformance: absent keys, the first writer winning at init,
// the last one at put.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SettingsStore } from '../../storage/types.ts';
import type { MakeStore } from './store-fixtures.ts';

export function settingsStoreSuite(make: MakeStore<SettingsStore>): void {
  describe('SettingsStore', () => {
    let store: SettingsStore;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      ({ store, cleanup } = await make());
    });
    afterEach(() => cleanup());

    it('getSetting: null until set, then the value, per key', async () => {
      expect(await store.getSetting('secret')).toBeNull();
      await store.initSetting('secret', 's3cr3t');
      expect(await store.getSetting('secret')).toBe('s3cr3t');
      expect(await store.getSetting('other')).toBeNull();
    });

    it('initSetting: the first writer wins, also when racing', async () => {
      expect(await store.initSetting('secret', 'one')).toBe('one');
      expect(await store.initSetting('secret', 'two')).toBe('one');
      expect(await store.getSetting('secret')).toBe('one');
      const raced = await Promise.all(['x', 'y', 'z'].map((v) => store.initSetting('raced', v)));
      expect(new Set(raced).size).toBe(1);
      expect(await store.getSetting('raced')).toBe(raced[0]);
    });

    it('putSetting: sets a key whatever it was, and an absent one', async () => {
      await store.putSetting('stopped', '1');
      expect(await store.getSetting('stopped')).toBe('1');
      await store.putSetting('stopped', '0');
      expect(await store.getSetting('stopped')).toBe('0');
      await store.initSetting('kept', 'first');
      await store.putSetting('kept', 'second');
      expect(await store.getSetting('kept')).toBe('second');
      expect(await store.initSetting('kept', 'third')).toBe('second');
    });
  });
}
