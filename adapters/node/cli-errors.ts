// The one error the command-line parsing throws, apart so every parsing
// module can throw it without importing the others.

/** A mistake in the command line: the CLI prints the message and exits 2. */
export class CliUsageError extends Error {
  override name = 'CliUsageError';
}
