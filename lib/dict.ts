// Objects keyed by what clients send (node ids, input names, form fields):
// with no prototype, a key such as `__proto__`, `constructor` or `toString`
// is stored and read as data, never as one of Object.prototype's members.
// (JSON.parse, Object.fromEntries and spreads already define own keys; a
// plain `obj[key] = value` does not.)

/** An empty object without a prototype; it serializes like `{}`. */
export const dict = <T>(): Record<string, T> => Object.create(null) as Record<string, T>;
