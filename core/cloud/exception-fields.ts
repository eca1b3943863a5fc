// What the reference engine's execution_error says of the exception, built
// from a job's JobError record: the same fields whether /ws sends them as the
// job fails or /history and /jobs show them afterwards. The traceback's
// file paths lose their directories (core/jobs/traceback.ts).
import { scrubTraceback } from '../jobs/traceback.ts';

/** A JobError traceback (one string) as the reference's list of lines. */
export function tracebackLines(traceback: unknown): string[] {
  if (Array.isArray(traceback)) return scrubTraceback(traceback.map(String));
  if (typeof traceback !== 'string' || traceback === '') return [];
  return scrubTraceback(traceback)
    .split('\n')
    .map((line) => `${line}\n`);
}

/** `exception_message`, `exception_type` and `traceback` of a JobError record. */
export function exceptionFields(err: Record<string, unknown>) {
  return {
    exception_message: typeof err.message === 'string' ? err.message : 'The job failed.',
    // The engine's kind (ValidationError, OOMError, TypeError...); the service's own failures have none.
    exception_type: typeof err.exception_type === 'string' && err.exception_type ? err.exception_type : 'ExecutionError',
    traceback: tracebackLines(err.traceback),
  };
}
