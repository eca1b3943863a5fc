// Maps a worker's execution_error onto the spec's exception types, keeping
// the worker's own type when none fits. The worker reports Python exception
// names and messages; these rules read both, because e.g. a missing model is
// a plain FileNotFoundError whose only clue is the path in its message.
import { ExecutionError } from '../types.ts';

/** The job's worker vanished mid-run: not the workflow's fault (a requeue can succeed). */
export const WORKER_LOST = 'WorkerLostError';
/** The job outlived the engine's per-job timeout on the worker. */
export const JOB_TIMEOUT = 'TimeoutError';

const MODEL_FILE = /\.(safetensors|ckpt|pt|pth|bin|gguf|onnx|sft)\b/i;
const MODEL_DIR = /[\\/]models?[\\/]|\b(checkpoints|loras|vae|clip|unet|diffusion_models|controlnet|upscale_models|embeddings|text_encoders)\b/i;

export function mapExceptionType(workerType: string, message: string, classType: string | null = null): string {
  const type = workerType || 'Exception';
  const text = `${type}: ${message}`;
  if (/OutOfMemory|\bOOM\b|out of memory|Allocation on device/i.test(text)) return 'OOMError';
  if (/insufficient (credits|funds|balance)|payment required/i.test(text)) return 'InsufficientFundsError';
  // Partner nodes answer 401 "Unauthorized: Please login first" when the account's key is not (or no longer) entitled.
  if ((/subscription/i.test(text) && /inactive|not active|expired/i.test(text)) || /Unauthorized: Please login/i.test(text))
    return 'InactiveSubscriptionError';
  if (/ValidationError|prompt_outputs_failed_validation|failed validation/i.test(text)) return 'ValidationError';
  if (/ModelDownloadError/.test(type)) return 'ModelDownloadError';
  if (/ImageDownloadError/.test(type)) return 'ImageDownloadError';
  const notFound = /FileNotFoundError|No such file|not found|does not exist/i.test(text);
  if (notFound && (MODEL_FILE.test(message) || MODEL_DIR.test(message) || (/Loader/i.test(classType ?? '') && !/LoadImage/i.test(classType ?? '')))) {
    return 'ModelDownloadError';
  }
  if (/(download|fetch)(ing)? (the )?(input )?image|image.*(download|fetch).*fail/i.test(message)) return 'ImageDownloadError';
  if (/URL/i.test(classType ?? '') && /URLError|HTTPError|ClientError|ConnectionError|Timeout/i.test(text)) return 'ImageDownloadError';
  return type;
}

/** The ExecutionError for an execution_error message's data (WS or history). */
export function executionErrorOf(data: Record<string, unknown>): ExecutionError {
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  const message = str(data.exception_message) ?? 'The workflow failed on the worker.';
  const classType = str(data.node_type);
  // format_tb lines end in a newline already; some workers send bare lines.
  const traceback = Array.isArray(data.traceback)
    ? data.traceback
        .map((l) => (String(l).endsWith('\n') ? String(l) : `${l}\n`))
        .join('')
        .trimEnd()
    : str(data.traceback);
  return new ExecutionError(
    message.trim() || 'The workflow failed on the worker.',
    mapExceptionType(str(data.exception_type) ?? '', message, classType),
    str(data.node_id),
    classType,
    traceback || null,
  );
}
