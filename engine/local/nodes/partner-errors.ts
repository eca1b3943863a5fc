// Failures of partner nodes in the reference's execution_error terms.

/** The job's account cannot pay for the call. */
export class InsufficientFundsError extends Error {
  override name = 'InsufficientFundsError';
  readonly exception_type = 'InsufficientFundsError';
}

/** The node's input is refused before anything is called. */
export class PartnerValidationError extends Error {
  override name = 'ValidationError';
  readonly exception_type = 'ValidationError';
}

/** The service gave this engine no partner services (the engine runs outside one). */
export class PartnerUnavailableError extends Error {
  override name = 'PartnerUnavailableError';
  readonly exception_type = 'PartnerUnavailableError';
}
