// Stored instants (epoch milliseconds) as the ISO 8601 strings every surface
// answers with.

export const isoTime = (ms: number): string => new Date(ms).toISOString();

/** For instants a record may not have yet (started_at, completed_at, ...). */
export const isoTimeOrNull = (ms: number | null): string | null => (ms === null ? null : isoTime(ms));
