// In-process SettingsStore over a map.
import type { SettingsStore } from '../types.ts';

export function createMemorySettingsStore(): SettingsStore {
  const settings = new Map<string, string>();
  return {
    async getSetting(key) {
      return settings.get(key) ?? null;
    },
    async initSetting(key, value) {
      if (!settings.has(key)) settings.set(key, value);
      return settings.get(key)!;
    },
    async putSetting(key, value) {
      settings.set(key, value);
    },
  };
}
