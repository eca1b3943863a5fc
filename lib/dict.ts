// Objects keyed by what clients send (node ids, input names, form fields):
// with no prototype, a key such as `__proto__`, `constructor` or `toString`
// is stored and read as data, never as one of Object.prototype's members.
// (JSON.parse, Object.fromEntries and spreads already define own keys; a
// plain `obj[key] = value` does not.)

/** An empty object without a prototype; it serializes like `{}`. */
export const dict = <T>(): Record<string, T> => Object.create(null) as Record<string, T>;

/** `obj[key]` when `key` is the object's own, else undefined (never an inherited member). */
export const own = <T>(obj: Record<string, T>, key: string): T | undefined => (Object.hasOwn(obj, key) ? obj[key] : undefined);
