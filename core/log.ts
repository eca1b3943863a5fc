// Default logger: one JSON object per line on the console's error stream, so
// operators can ship it anywhere; services may pass their own Logger instead.
import { stringifyJson } from '../lib/json.ts';
import type { Logger } from './types.ts';

function line(level: string, message: string, fields?: Record<string, unknown>) {
  // Lossless: a field may hold a workflow value beyond 2^53 (a BigInt), which JSON.stringify refuses.
  console.error(stringifyJson({ time: new Date().toISOString(), level, message, ...fields }));
}

export const consoleLogger: Logger = {
  info: (m, f) => line('info', m, f),
  warn: (m, f) => line('warn', m, f),
  error: (m, f) => line('error', m, f),
};

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

/** What a log line says of a thrown value: its stack where it has one. */
export const errorText = (err: unknown): string => (err instanceof Error ? (err.stack ?? err.message) : String(err));

/** The same as a log line's field: `logger.error(message, { ...errorFields(err) })`. */
export const errorFields = (err: unknown): { error: string } => ({ error: errorText(err) });
