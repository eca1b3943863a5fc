// What the client commands fail with, and the exit code each means: 1 for a
// failed job or a server's refusal, 2 for a usage mistake (CliUsageError,
// shared with serve/runner), 130 when interrupted. ApiError keeps the v2
// envelope `{error: {code, message, details}}` so its details can be shown.
export { CliUsageError } from '../cli-errors.ts';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;
/** 128 + SIGINT, what a shell reports for a command stopped by Ctrl-C. */
export const EXIT_INTERRUPTED = 130;

/** A failure the CLI reports as one message (no stack trace) and exits with `exitCode`. */
export class ClientError extends Error {
  override name = 'ClientError';
  constructor(
    message: string,
    readonly exitCode: number = EXIT_FAILED,
  ) {
    super(message);
  }
}

/** A server's answer other than 2xx, from its v2 error envelope when it sent one. */
export class ApiError extends ClientError {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> | null,
  ) {
    super(`${code}: ${message}`);
  }
}

/** The lines of an ApiError's details worth showing: a refused workflow's `node_errors`, one line per entry. */
export function detailLines(err: ApiError): string[] {
  const nodeErrors = err.details?.node_errors;
  if (typeof nodeErrors !== 'object' || nodeErrors === null) return [];
  const lines: string[] = [];
  for (const [node, entries] of Object.entries(nodeErrors as Record<string, unknown>)) {
    for (const entry of Array.isArray(entries) ? entries : [entries]) {
      const { field, reason, message } = (entry ?? {}) as Record<string, unknown>;
      const where = typeof field === 'string' ? `node ${node}, input ${field}` : `node ${node}`;
      const what = [reason, message].filter((s) => typeof s === 'string' && s !== '').join(': ');
      lines.push(`  ${where}: ${what || JSON.stringify(entry)}`);
    }
  }
  return lines;
}

/** An error envelope from a response that is not 2xx; `what` names the request for a body that is not one. */
export async function apiErrorOf(res: Response, what: string): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: described below
  }
  const error = (body as { error?: Record<string, unknown> } | undefined)?.error;
  if (error && typeof error.code === 'string' && typeof error.message === 'string') {
    const details = typeof error.details === 'object' && error.details !== null ? (error.details as Record<string, unknown>) : null;
    return new ApiError(res.status, error.code, error.message, details);
  }
  // Not the envelope: a proxy's page or another service at that address.
  const snippet = text.trim().replace(/\s+/g, ' ').slice(0, 200);
  return new ApiError(res.status, `http_${res.status}`, `${what} answered ${res.status} ${res.statusText}${snippet ? `: ${snippet}` : ''}`, null);
}
