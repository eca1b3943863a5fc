// The workflow `graphrun run` submits: an API-format graph read from a file
// (or stdin for "-"), bare or in the `{"prompt": {...}}` wrapper the
// cloud-compatible /api/prompt takes, and the --input NODE.INPUT=path flags
// that point one node input each at an uploaded file.
import { readFile, stat } from 'node:fs/promises';
import { text } from 'node:stream/consumers';
import { CliUsageError } from './errors.ts';
import type { Asset } from './types.ts';

export type Workflow = Record<string, { class_type?: unknown; inputs?: Record<string, unknown> } & Record<string, unknown>>;

export interface InputFlag {
  node: string;
  input: string;
  path: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The graph inside a `{prompt}` (or the v2 request's `{workflow}`) wrapper; a node named so has a class_type. */
export function unwrap(doc: Record<string, unknown>): Record<string, unknown> {
  for (const key of ['prompt', 'workflow']) {
    const inner = doc[key];
    if (isObject(inner) && !('class_type' in inner)) return inner;
  }
  return doc;
}

export async function readWorkflow(file: string, stdin: NodeJS.ReadableStream = process.stdin): Promise<Workflow> {
  let source: string;
  try {
    source = file === '-' ? await text(stdin) : await readFile(file, 'utf8');
  } catch (err) {
    throw new CliUsageError(`cannot read the workflow ${file}: ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(source);
  } catch (err) {
    throw new CliUsageError(`the workflow ${file} is not JSON: ${(err as Error).message}`);
  }
  if (!isObject(doc)) throw new CliUsageError(`the workflow ${file} must be a JSON object of nodes (the API format).`);
  // Anything else (a UI export, an unknown node) is the server's to judge: it says what is wrong.
  return unwrap(doc) as Workflow;
}

/** One --input value, `NODE.INPUT=path`; the node id is what comes before the last dot (input names have none). */
export function parseInputFlag(raw: string): InputFlag {
  const eq = raw.indexOf('=');
  const target = eq < 0 ? '' : raw.slice(0, eq);
  const dot = target.lastIndexOf('.');
  const flag = { node: target.slice(0, dot), input: target.slice(dot + 1), path: raw.slice(eq + 1) };
  if (eq < 0 || dot <= 0 || flag.input === '' || flag.path === '') {
    throw new CliUsageError(`--input must look like NODE.INPUT=path (e.g. 10.image=photo.png), got "${raw}".`);
  }
  return flag;
}

/** Checks each flag against the workflow and the disk before anything is uploaded. */
export async function checkInputs(workflow: Workflow, flags: InputFlag[]): Promise<void> {
  for (const { node, input, path } of flags) {
    if (!isObject(workflow[node])) throw new CliUsageError(`--input ${node}.${input}: the workflow has no node "${node}".`);
    const info = await stat(path).catch((err: Error) => {
      throw new CliUsageError(`--input ${node}.${input}: cannot read ${path}: ${err.message}`);
    });
    if (!info.isFile()) throw new CliUsageError(`--input ${node}.${input}: ${path} is not a file.`);
  }
}

/** The contract's typed asset reference: `info.id` is authoritative, `hash` and `file_path` only hints. */
export function assetReference(asset: Asset): Record<string, unknown> {
  const info: Record<string, unknown> = { id: asset.id };
  if (typeof asset.hash === 'string') info.hash = asset.hash;
  if (typeof asset.file_path === 'string') info.file_path = asset.file_path;
  return { __type: 'core/ASSET', info };
}

/** Sets the node input to the asset, in place. */
export function setInput(workflow: Workflow, { node, input }: InputFlag, asset: Asset): void {
  const target = workflow[node];
  target.inputs = { ...(isObject(target.inputs) ? target.inputs : {}), [input]: assetReference(asset) };
}
