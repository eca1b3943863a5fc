// Stages a job's input assets onto its worker: finds inputs that name an
// asset of the job's account (a file-upload input such as LoadImage's
// `image`, or any string holding an asset id), uploads each once through
// `/upload/image` straight from the asset's stream, and returns a copy of
// the workflow pointing at the names the worker gave them. An upload the
// worker refuses (4xx) fails the job naming the input; a worker fault (5xx,
// no answer) is left to the caller, which tries another worker.
import { extensionForType } from '../../lib/media-extension.ts';
import { isUuid } from '../../lib/uuid.ts';
import { type ExecutionContext, ExecutionError, type NodeDefinition, type Workflow } from '../types.ts';
import { hasUploadFlag } from './output-files.ts';
import { type WorkerClient, WorkerHttpError } from './worker-client.ts';

/** The reference's annotated form: "name.png [input]" names the file in that folder. */
const ANNOTATION = /\s*\[(input|output|temp)\]$/;

/** Whether an input takes a file by name: the reference flags these (`image_upload`, `video_upload`, `audio_upload`, `upload`). */
export function isUploadInput(def: NodeDefinition | undefined, input: string): boolean {
  if (!def) return input === 'image';
  const spec = def.input.required[input] ?? def.input.optional?.[input];
  return hasUploadFlag(spec?.[1]);
}

/** The candidate references: [node id, input, value] of upload inputs and of asset-id strings. */
export function assetCandidates(workflow: Workflow, defs: Record<string, NodeDefinition>): Array<[string, string, string]> {
  const out: Array<[string, string, string]> = [];
  for (const [id, node] of Object.entries(workflow)) {
    for (const [input, value] of Object.entries(node.inputs ?? {})) {
      if (typeof value !== 'string' || value === '') continue;
      if (isUuid(value) || isUploadInput(defs[node.class_type], input)) out.push([id, input, value]);
    }
  }
  return out;
}

type Asset = NonNullable<Awaited<ReturnType<ExecutionContext['readAsset']>>>;

async function resolve(ctx: ExecutionContext, value: string): Promise<{ asset: Asset; name: string } | null> {
  const ref = value.replace(ANNOTATION, '').trim();
  if (isUuid(ref)) {
    const byId = await ctx.readAsset({ id: ref.toLowerCase() });
    if (byId) return { asset: byId, name: ref };
  }
  const byName = await ctx.readAsset({ name: ref });
  return byName ? { asset: byName, name: ref } : null;
}

/** Makes a name the worker will accept as a plain file name in its input folder. */
function uploadName(name: string, asset: Asset): string {
  const base =
    name
      .split(/[\\/]/)
      .pop()!
      .replace(/[^\w.\- ()[\]]+/g, '_') || asset.id;
  if (/\.[a-z0-9]{2,5}$/i.test(base)) return base;
  return `${base}${extensionForType(asset.content_type)}`;
}

export async function stageInputs(
  workflow: Workflow,
  defs: Record<string, NodeDefinition>,
  ctx: ExecutionContext,
  client: WorkerClient,
): Promise<Workflow> {
  const candidates = assetCandidates(workflow, defs);
  if (candidates.length === 0) return workflow;
  const copy: Workflow = Object.fromEntries(Object.entries(workflow).map(([id, n]) => [id, { ...n, inputs: { ...n.inputs } }]));
  // One upload per asset per job, however many inputs name it.
  const staged = new Map<string, Promise<string>>();
  for (const [id, input, value] of candidates) {
    ctx.signal.throwIfAborted();
    const found = await resolve(ctx, value);
    // Not ours: maybe a file the worker already has (a model, an example image); the worker decides.
    if (!found) continue;
    let name = staged.get(found.asset.id);
    if (!name) {
      const filename = uploadName(found.name, found.asset);
      const class_type = workflow[id].class_type;
      name = client
        .upload(
          { field: 'image', filename, content_type: found.asset.content_type, body: found.asset.body, size: found.asset.size_bytes },
          { type: 'input', subfolder: '' },
        )
        .then(
          (r) => (r.subfolder ? `${r.subfolder}/${r.name}` : r.name),
          (err) => {
            if (!(err instanceof WorkerHttpError) || err.status >= 500) throw err;
            throw new ExecutionError(
              `The worker refused input '${input}' of node ${id} (${class_type}): uploading asset ${found.asset.id} as ${filename} failed: ${err.message}`,
              'ValidationError',
              id,
              class_type,
            );
          },
        );
      staged.set(found.asset.id, name);
    } else {
      // A second read of the same asset: its stream is not needed.
      await found.asset.body.cancel().catch(() => {});
    }
    // Defined, not assigned: an input name is data (`__proto__` included).
    Object.defineProperty(copy[id].inputs, input, { value: await name, enumerable: true, writable: true, configurable: true });
  }
  return copy;
}
