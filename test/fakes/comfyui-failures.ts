// Failure switches of the fake engine worker (comfyui-wrap-node.ts applies
// the execution-side ones: slow nodes, hung nodes, injected errors). Injected
// errors mimic what the real server reports for each kind (exception_type as
// Python's full type name, its message, a Python-style traceback), so the
// worker engine's error mapping (OOM -> OOMError, model missing ->
// ModelDownloadError, ...) can be tested against realistic messages.
import { EXEC_FRAMES, OOM_TIPS, sentMessage, pythonFrames as tb } from './comfyui-execution-error.ts';

export type InjectedErrorKind = 'oom' | 'model_missing' | 'image_download' | 'insufficient_funds' | 'inactive_subscription' | 'runtime' | 'value';

export interface InjectedError {
  /** A canned error of the real server (see ERROR_CATALOG), or a custom one. */
  kind?: InjectedErrorKind;
  exception_type?: string;
  /** The exception's text; sent as the real server does, with a newline after it. */
  exception_message?: string;
  traceback?: string[];
  /** Only a node of this class / id fails; default the first node that runs. */
  class_type?: string;
  node_id?: string;
  /** Stays armed after it fired (default: fires once, then clears itself). */
  sticky?: boolean;
}

export interface RouteFailure {
  /** `"/prompt"`, `"POST /prompt"`, `"GET /history"` (also matches `/history/{id}`); bare form, `/api` is stripped. */
  route: string;
  /** Default 500. */
  status?: number;
  /** Never answered instead (the connection stays open until cut): a route that hangs. */
  hang?: boolean;
  /** The connection is cut instead, no answer at all (a worker whose process died mid-request). */
  cut?: boolean;
  /** How many requests fail, then the entry is removed (default: all). */
  times?: number;
}

export interface FakeWorkerFailures {
  /** HTTP routes answering an error status (a 500 by default) with a short text body. */
  routes: RouteFailure[];
  /** Accept TCP connections but never answer an HTTP request or a WebSocket upgrade. */
  blackhole: boolean;
  /** WebSocket upgrades are refused (HTTP 503) while HTTP keeps working. */
  refuseWebSockets: boolean;
  /** During a prompt, after its Nth WS message was produced, every open WebSocket is dropped (no close frame). */
  dropWebSocketsAfter: number | null;
  /** Keep dropping on later prompts too (default: fires once, then clears itself). */
  dropWebSocketsSticky: boolean;
  /**
   * The next node that runs never returns: `'interruptible'` until /interrupt
   * or a cancel, `'stuck'` even then (a wedged GPU, until the fake's
   * unstick() or close()); false when off.
   */
  hang: false | 'interruptible' | 'stuck';
  /** Every node that runs waits this long first (slow execution); an interrupt still cuts it short. */
  nodeDelayMs: number;
  error: InjectedError | null;
  /** `POST /api/jobs/{id}/cancel` exists (recent servers); false answers 404 like older ones. */
  jobCancelRoute: boolean;
  /**
   * A cached node is sent `executed` again (servers since 2024's execution
   * model); false: only `execution_cached` names it and only the history
   * lists its files, as older servers did.
   */
  cachedExecuted: boolean;
}

export const defaultFailures = (): FakeWorkerFailures => ({
  routes: [],
  blackhole: false,
  refuseWebSockets: false,
  dropWebSocketsAfter: null,
  dropWebSocketsSticky: false,
  hang: false,
  nodeDelayMs: 0,
  error: null,
  jobCancelRoute: true,
  cachedExecuted: true,
});

/** What the real server reports for each kind of failure (`exception_message` as sent: it ends with a newline, or with the tips). */
export const ERROR_CATALOG: Record<InjectedErrorKind, { exception_type: string; exception_message: string; traceback: string[] }> = {
  oom: {
    exception_type: 'torch.OutOfMemoryError',
    exception_message: sentMessage(
      'Allocation on device \nCUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.02 GiB is free.',
      OOM_TIPS,
    ),
    traceback: [...EXEC_FRAMES, ...tb(['/ComfyUI/comfy/ldm/modules/attention.py', 231, 'attention_split', 'raise e'])],
  },
  model_missing: {
    exception_type: 'FileNotFoundError',
    exception_message: sentMessage("Model in folder 'checkpoints' with filename 'sd_xl_base_1.0.safetensors' not found."),
    traceback: [
      ...EXEC_FRAMES,
      ...tb([
        '/ComfyUI/folder_paths.py',
        310,
        'get_full_path_or_raise',
        "raise FileNotFoundError(f\"Model in folder '{folder_name}' with filename '{filename}' not found.\")",
      ]),
    ],
  },
  image_download: {
    exception_type: 'Exception',
    exception_message: sentMessage('Failed to download image from https://example.com/missing.png: 404 Not Found'),
    traceback: [
      ...EXEC_FRAMES,
      ...tb([
        '/ComfyUI/comfy_api_nodes/util/download_helpers.py',
        88,
        'download_url_to_bytesio',
        'raise Exception(f"Failed to download image from {url}: {e}")',
      ]),
    ],
  },
  insufficient_funds: {
    exception_type: 'Exception',
    exception_message: sentMessage('Payment Required: Please add credits to your account to use this node.'),
    traceback: [...EXEC_FRAMES, ...tb(['/ComfyUI/comfy_api_nodes/apis/client.py', 612, '_handle_http_error', 'raise Exception(user_friendly)'])],
  },
  inactive_subscription: {
    exception_type: 'Exception',
    exception_message: sentMessage('Unauthorized: Please login first to use this node.'),
    traceback: [...EXEC_FRAMES, ...tb(['/ComfyUI/comfy_api_nodes/apis/client.py', 605, '_handle_http_error', 'raise Exception(user_friendly)'])],
  },
  runtime: {
    exception_type: 'RuntimeError',
    exception_message: sentMessage('mat1 and mat2 shapes cannot be multiplied (154x768 and 2048x320)'),
    traceback: [
      ...EXEC_FRAMES,
      ...tb(['/ComfyUI/comfy/ops.py', 68, 'forward_comfy_cast_weights', 'return torch.nn.functional.linear(input, weight, bias)']),
    ],
  },
  value: {
    exception_type: 'ValueError',
    exception_message: sentMessage('Invalid value for denoise: expected a number between 0.0 and 1.0'),
    traceback: EXEC_FRAMES,
  },
};

export function resolveInjected(e: InjectedError): { exception_type: string; exception_message: string; traceback: string[] } {
  const base = e.kind
    ? ERROR_CATALOG[e.kind]
    : { exception_type: 'Exception', exception_message: sentMessage('injected failure'), traceback: EXEC_FRAMES };
  return {
    exception_type: e.exception_type ?? base.exception_type,
    exception_message: e.exception_message === undefined ? base.exception_message : sentMessage(e.exception_message),
    traceback: e.traceback ?? base.traceback,
  };
}
