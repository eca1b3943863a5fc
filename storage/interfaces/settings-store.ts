// Settings: a small key/value table for values the service makes once and
// must keep across restarts (the signing secret), whoever starts first.

export interface SettingsStore {
  getSetting(key: string): Promise<string | null>;
  /** Sets `key` only if absent; returns the value that is stored afterwards. */
  initSetting(key: string, value: string): Promise<string>;
}
