// Stored instants (epoch milliseconds) as the ISO 8601 strings every surface
// answers with.

const pad2 = (n: number): string => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number): string => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/** 1970-01-01 to 9999-12-31T23:59:59.999Z: the years Date#toISOString writes with four digits. */
const LAST_FOUR_DIGIT_MS = 253402300799999;
const DAY_MS = 86_400_000;

/**
 * What `new Date(ms).toISOString()` gives, written without a Date: a job's
 * view carries four instants and each of its outputs two, and V8's
 * toISOString (a call into the runtime) cost more than the rest of the view.
 * Days to a civil date by Howard Hinnant's `civil_from_days`.
 */
export const isoTime = (ms: number): string => {
  if (!Number.isInteger(ms) || ms < 0 || ms > LAST_FOUR_DIGIT_MS) return new Date(ms).toISOString();
  const days = Math.floor(ms / DAY_MS);
  const inDay = ms - days * DAY_MS;
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const h = Math.floor(inDay / 3_600_000);
  const m = Math.floor(inDay / 60_000) % 60;
  const s = Math.floor(inDay / 1000) % 60;
  return `${year}-${pad2(month)}-${pad2(day)}T${pad2(h)}:${pad2(m)}:${pad2(s)}.${pad3(inDay % 1000)}Z`;
};

/** For instants a record may not have yet (started_at, completed_at, ...). */
export const isoTimeOrNull = (ms: number | null): string | null => (ms === null ? null : isoTime(ms));
