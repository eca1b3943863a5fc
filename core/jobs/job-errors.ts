// The JobError records the service itself writes (as opposed to the engine's
// execution errors): one place, so every path that ends a job the same way
// says the same thing.

/** A JobError with no node: the job as a whole ended this way. */
export const jobError = (code: string, message: string) => ({
  code,
  message,
  exception_type: null,
  node_id: null,
  class_type: null,
  traceback: null,
});
export const INTERRUPTED_ERROR = jobError(
  'job_interrupted',
  'The service stopped while this job was running, and it is configured not to run interrupted jobs again.',
);
export const EXPIRED_ERROR = jobError('job_expired', 'The job reached the end of its retention before it could start.');
