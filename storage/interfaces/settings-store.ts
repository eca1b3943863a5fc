// Settings: a small key/value table for values the service makes once and
// must keep across restarts (the signing secret), whoever starts first, and
// the few an operator changes at run time (a deployment stopped).

export interface SettingsStore {
  getSetting(key: string): Promise<string | null>;
  /** Sets `key` only if absent; returns the value that is stored afterwards. */
  initSetting(key: string, value: string): Promise<string>;
  /** Sets `key` to `value`, whatever it was (the last writer wins). */
  putSetting(key: string, value: string): Promise<void>;
}
