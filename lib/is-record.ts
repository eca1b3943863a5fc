// The guard every reader of untyped JSON (request bodies, engine replies,
// runtime events) starts with, so its fields can then be read.

/** A JSON object: not null, not an array. */
export const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
