// The fake worker's HTTP routes, each answered as the real server answers it
// (bodies, statuses, queue tuples, naming rules). Paths arrive bare: the
// caller strips a leading `/api`. A handler returns a Web Response, or a file
// to stream from disk.
import { randomUUID } from 'node:crypto';
import type { Engine, Workflow } from '../../engine/types.ts';
import { parseJson } from '../../lib/json.ts';
import type { FakeWorkerFailures } from './comfyui-failures.ts';
import type { FileStore, FileType } from './comfyui-files.ts';
import { objectInfoResponse } from './comfyui-object-info.ts';
import type { PromptQueue, QueueItem } from './comfyui-queue.ts';
import { SERVER_FEATURES } from './comfyui-ws.ts';

export type RouteResult = Response | { file: string; name: string };

export interface RouteDeps {
  engine: Engine;
  queue: PromptQueue;
  files: FileStore;
  failures: FakeWorkerFailures;
  /** Every POST /prompt body as received (API keys included), for tests. */
  submissions: Array<{ prompt_id: string; body: Record<string, unknown> }>;
  /** Every POST /interrupt, with the prompt id it named (null: none), for tests. */
  interrupts: Array<{ prompt_id: string | null }>;
}

/** Python's str() of a JSON value, as the real server makes a prompt_id of whatever it is given. */
function pythonStr(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

const json = (body: unknown, status = 200) => Response.json(body, { status });
const empty = (status = 200) => new Response(null, { status });
const badPrompt = (type: string, message: string, details = message) =>
  json({ error: { type, message, details, extra_info: {} }, node_errors: {} }, 400);
const tuple = (item: QueueItem): QueueItem => [...item];

export function createRoutes(deps: RouteDeps) {
  const { engine, queue, files } = deps;
  let number = 0;

  async function postPrompt(req: Request): Promise<Response> {
    // Integers beyond 2^53 (seeds) read exactly, as Python's json module reads them.
    const body = (await req
      .text()
      .then(parseJson, () => null)
      .catch(() => null)) as Record<string, unknown> | null;
    if (!body || typeof body !== 'object') return badPrompt('invalid_json', 'Invalid JSON body');
    if (!('prompt' in body)) return badPrompt('no_prompt', 'No prompt provided');
    // As the real server: any prompt_id is taken (as str() of it), and one already used is accepted:
    // the prompt runs again and its history entry is replaced.
    const prompt_id = body.prompt_id === undefined ? randomUUID() : pythonStr(body.prompt_id);
    let n: number;
    if (typeof body.number === 'number' || typeof body.number === 'string') n = Number(body.number);
    else n = body.front ? -number++ : number++;

    const checked = await engine.validate(body.prompt as Workflow);
    deps.submissions.push({ prompt_id, body });
    if (!checked.ok) return json({ error: checked.error, node_errors: checked.node_errors }, 400);

    // As submitted, API keys included (only history entries leave them out); the real server adds no create_time.
    const extra_data: Record<string, unknown> = { ...((body.extra_data as Record<string, unknown>) ?? {}) };
    if (typeof body.client_id === 'string') extra_data.client_id = body.client_id;
    queue.put([n, prompt_id, body.prompt as Workflow, extra_data, checked.outputs]);
    return json({ prompt_id, number: n, node_errors: checked.node_errors ?? {} });
  }

  async function postQueue(req: Request): Promise<Response> {
    const body = (await req.json().catch(() => ({}))) as { clear?: unknown; delete?: unknown };
    if (body.clear) queue.remove(() => true);
    if (Array.isArray(body.delete)) {
      const ids = new Set(body.delete.map(String));
      queue.remove((id) => ids.has(id));
    }
    return empty();
  }

  async function interrupt(req: Request): Promise<Response> {
    const body = (await req.json().catch(() => ({}))) as { prompt_id?: unknown };
    const prompt_id = typeof body.prompt_id === 'string' && body.prompt_id ? body.prompt_id : undefined;
    deps.interrupts.push({ prompt_id: prompt_id ?? null });
    // As the real server: a prompt_id that is not the running prompt interrupts nothing.
    queue.interrupt(prompt_id);
    return empty();
  }

  function cancelJob(id: string): Response {
    if (!deps.failures.jobCancelRoute) return empty(404);
    if (queue.running?.item[1] === id) {
      queue.interrupt(id);
      return json({ prompt_id: id, status: 'cancelling' });
    }
    if (queue.remove((p) => p === id).length > 0) return json({ prompt_id: id, status: 'cancelled' });
    if (queue.history.has(id)) return json({ error: 'job already finished' }, 409);
    return json({ error: 'job not found' }, 404);
  }

  function history(url: URL): Response {
    const all = [...queue.history.entries()];
    const max = url.searchParams.get('max_items');
    const offset = Number(url.searchParams.get('offset') ?? -1);
    let pick = all;
    if (max !== null) {
      const start = offset >= 0 ? offset : Math.max(0, all.length - Number(max));
      pick = all.slice(start, start + Number(max));
    }
    return json(Object.fromEntries(pick));
  }

  async function upload(req: Request): Promise<Response> {
    const form = await req.formData().catch(() => null);
    const image = form?.get('image');
    if (!form || !image || typeof image === 'string' || !image.name) return empty(400);
    const type = String(form.get('type') ?? 'input') || 'input';
    if (!['input', 'temp', 'output'].includes(type)) return empty(400);
    const subfolder = String(form.get('subfolder') ?? '');
    const overwrite = ['true', '1'].includes(String(form.get('overwrite') ?? ''));
    const bytes = new Uint8Array(await image.arrayBuffer());
    const name = files.upload(type as FileType, subfolder, image.name, bytes, overwrite);
    if (name === null) return empty(400);
    return json({ name, subfolder, type });
  }

  function view(url: URL): RouteResult {
    const q = url.searchParams;
    const filename = q.get('filename');
    if (filename === null) return empty(404);
    const found = files.locate(q.get('type') ?? 'output', q.get('subfolder') ?? '', filename);
    if ('status' in found) return empty(found.status);
    return { file: found.path, name: found.name };
  }

  return async function route(method: string, path: string, url: URL, req: Request): Promise<RouteResult> {
    const key = `${method} ${path}`;
    if (key === 'POST /prompt') return postPrompt(req);
    if (key === 'GET /prompt') return json({ exec_info: { queue_remaining: queue.remaining() } });
    if (key === 'GET /queue') {
      return json({ queue_running: queue.running ? [tuple(queue.running.item)] : [], queue_pending: queue.pending.map((p) => tuple(p.item)) });
    }
    if (key === 'POST /queue') return postQueue(req);
    if (key === 'POST /interrupt') return interrupt(req);
    const cancel = /^\/jobs\/([^/]+)\/cancel$/.exec(path);
    if (cancel && method === 'POST') return cancelJob(decodeURIComponent(cancel[1]));
    if (key === 'GET /history') return history(url);
    const one = /^\/history\/([^/]+)$/.exec(path);
    if (one && method === 'GET') {
      const entry = queue.history.get(decodeURIComponent(one[1]));
      return json(entry ? { [decodeURIComponent(one[1])]: entry } : {});
    }
    if (key === 'POST /history') {
      const body = (await req.json().catch(() => ({}))) as { clear?: unknown; delete?: unknown };
      if (body.clear) queue.history.clear();
      if (Array.isArray(body.delete)) for (const id of body.delete) queue.history.delete(String(id));
      return empty();
    }
    if (key === 'GET /view') return view(url);
    if (key === 'POST /upload/image') return upload(req);
    if (key === 'GET /object_info') return objectInfoResponse(await engine.nodeDefinitions());
    const info = /^\/object_info\/(.+)$/.exec(path);
    if (info && method === 'GET') {
      const defs = await engine.nodeDefinitions();
      const name = decodeURIComponent(info[1]);
      return objectInfoResponse(defs[name] ? { [name]: defs[name] } : {});
    }
    if (key === 'GET /system_stats') return json(systemStats());
    if (key === 'GET /features') return json(SERVER_FEATURES);
    return empty(404);
  };
}

function systemStats() {
  return {
    system: {
      os: 'posix',
      ram_total: 68_719_476_736,
      ram_free: 51_539_607_552,
      comfyui_version: '0.3.64',
      required_frontend_version: '1.27.10',
      installed_templates_version: '0.1.95',
      required_templates_version: '0.1.95',
      python_version: '3.12.3 (main) [GCC 13.2.0]',
      pytorch_version: '2.8.0+cu128',
      embedded_python: false,
      argv: ['main.py', '--listen', '0.0.0.0'],
    },
    devices: [
      {
        name: 'cuda:0 NVIDIA GeForce RTX 4090 : cudaMallocAsync',
        type: 'cuda',
        index: 0,
        vram_total: 25_393_692_672,
        vram_free: 24_000_000_000,
        torch_vram_total: 0,
        torch_vram_free: 0,
      },
    ],
  };
}
