// What execution_error carries, as the real server writes it: `traceback`
// is Python's traceback.format_tb, one entry per frame, each a block of two
// lines (where, then the code), the executor's frames first;
// `exception_message` is the exception's text, a newline, then the tips
// (only out-of-memory errors have some), so it ends with a newline;
// `current_inputs` holds each input as a one-item list, formatted.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export type Frame = [file: string, line: number, fn: string, code: string];

export const pythonFrames = (...frames: Frame[]): string[] =>
  frames.map(([file, line, fn, code]) => `  File "${file}", line ${line}, in ${fn}\n    ${code}\n`);

/** The real executor's own frames, above every failing node's. */
export const EXEC_FRAMES = pythonFrames(
  [
    '/ComfyUI/execution.py',
    496,
    'execute',
    'output_data, output_ui, has_subgraph, has_pending_tasks = await get_output_data(prompt_id, unique_id, obj, input_data_all, execution_block_cb=execution_block_cb, pre_execute_cb=pre_execute_cb, hidden_inputs=hidden_inputs)',
  ],
  [
    '/ComfyUI/execution.py',
    315,
    'get_output_data',
    'return_values = await _async_map_node_over_list(prompt_id, unique_id, obj, input_data_all, obj.FUNCTION, allow_interrupt=True, execution_block_cb=execution_block_cb, pre_execute_cb=pre_execute_cb, hidden_inputs=hidden_inputs)',
  ],
);

export const OOM_TIPS =
  'This error means you ran out of memory on your GPU.\n\nTIPS: If the workflow worked before you might have accidentally set the batch_size to a large number.';

/** `exception_message` as sent: the text, a newline, the tips. */
export const sentMessage = (text: string, tips = '') => `${text}\n${tips}`;

// `    at fn (file:line:col)` or `    at file:line:col`.
const JS_FRAME = /^\s*at (?:(.+?) \()?(.+?):(\d+):\d+\)?$/;
// Frames from here on are the fake's and the local engine's, which the real server's executor frames stand for.
const RUNNER = /[\\/](test[\\/]fakes|engine[\\/]local)[\\/]/;

/** A node's JS error as the real server would report it: the executor's frames, then the node's own, outermost first. */
export function tracebackOf(stack: string | null): string[] {
  if (!stack) return [...EXEC_FRAMES];
  const own: Frame[] = [];
  for (const line of stack.split('\n')) {
    const m = JS_FRAME.exec(line);
    if (!m) continue;
    const [, fn = '<module>', file, lineNo] = m;
    if (RUNNER.test(file)) break;
    own.push([file, Number(lineNo), fn, sourceLine(file, Number(lineNo)) ?? `${fn}()`]);
  }
  return [...EXEC_FRAMES, ...pythonFrames(...own.reverse())];
}

function sourceLine(file: string, line: number): string | null {
  try {
    const path = file.startsWith('file:') ? fileURLToPath(file) : file;
    return readFileSync(path, 'utf8').split('\n')[line - 1]?.trim() || null;
  } catch {
    return null;
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The reference's format_value: primitives as they are, anything else as its string. */
export function formatInputs(inputs: Record<string, unknown>): Record<string, unknown[]> {
  const fmt = (v: unknown) => (v === null || ['string', 'number', 'boolean'].includes(typeof v) ? v : describe(v));
  return Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, [fmt(v)]]));
}

function describe(v: unknown): string {
  if (isRecord(v) && typeof v.width === 'number' && typeof v.height === 'number')
    return `tensor of shape [${v.count ?? 1}, ${v.height}, ${v.width}, 3]`;
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}
