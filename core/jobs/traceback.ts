// Tracebacks as clients see them: every frame keeps its file's name, line
// and function, but not the directories the file lives in on the server
// (`at run (/srv/app/engine/local/run-node.ts:41:27)` -> `at run
// (run-node.ts:41:27)`, Python's `File "/opt/comfyui/execution.py"` ->
// `File "execution.py"`): where the service is installed, its user name and
// its layout are none of a client's business. Applied where a job's error is
// recorded and again where it is shown (rows written before stay covered).

// The directories of an absolute path: a `file:` URL, a POSIX path or a
// Windows one, starting after a space, a bracket, a quote or `@` (V8's
// `fn@file` frames elsewhere), up to the last separator. What follows (the
// file name, `:line:col`) is kept.
const DIRECTORIES = /(?<=^|[\s(["'@=])(?:file:\/\/\/?|[A-Za-z]:[\\/]|\\\\|\/)(?:[^\s\\/"'()<>[\]]*[\\/])+/g;

/** The text with the directory part of every absolute file path taken out. */
export function scrubPaths(text: string): string {
  return text.replace(DIRECTORIES, '');
}

/** A recorded traceback (a string, or the reference's list of lines) with its paths scrubbed; anything else as it is. */
export function scrubTraceback<T>(traceback: T): T {
  if (typeof traceback === 'string') return scrubPaths(traceback) as T;
  if (Array.isArray(traceback)) return traceback.map((line) => (typeof line === 'string' ? scrubPaths(line) : line)) as T;
  return traceback;
}
