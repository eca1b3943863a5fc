// `graphrun run workflow.json`: uploads the --input files as assets and points
// their node inputs at them, submits the workflow, follows the job with a
// progress display, and on success downloads every output into --out,
// printing their paths (or, with --json, the job and the files). A job that
// fails or is canceled exits 1 with its error; Ctrl-C cancels the job and
// exits 130.
import { resolve } from 'node:path';
import { type Api, createApi, isAbort } from './api.ts';
import { type ConnectionFlags, clientConfig } from './config.ts';
import { downloadOutputs, type SavedOutput } from './download.ts';
import { EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK } from './errors.ts';
import { followJob } from './follow-job.ts';
import { watchInterrupt } from './interrupt.ts';
import { jobFailure } from './job-text.ts';
import { createProgressView, type ProgressView } from './progress-view.ts';
import type { Job } from './types.ts';
import { uploadFile } from './upload.ts';
import { checkInputs, parseInputFlag, readWorkflow, setInput, type Workflow } from './workflow-file.ts';

export interface RunFlags extends ConnectionFlags {
  input?: string[];
  out: string;
  json?: boolean;
}

type Env = Record<string, string | undefined>;

async function submit(api: Api, workflow: Workflow): Promise<Job> {
  // Single-use key: a retry of this very request can never run the workflow twice.
  return api.json<Job>('/api/v2/jobs', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
    body: JSON.stringify({ workflow }),
  });
}

/** After Ctrl-C: asks the server to cancel the job and says how that went. */
async function cancelOnInterrupt(api: Api, job: Job, view: ProgressView): Promise<number> {
  view.stop();
  try {
    const now = await api.json<Job>(api.link(job.urls.cancel), { method: 'POST' });
    process.stderr.write(`graphrun: interrupted: job ${job.id} ${now.status === 'canceling' ? 'is canceling' : now.status}\n`);
  } catch (err) {
    process.stderr.write(`graphrun: interrupted, but canceling job ${job.id} failed: ${(err as Error).message}\n`);
  }
  return EXIT_INTERRUPTED;
}

export async function runCommand(file: string, flags: RunFlags, env: Env): Promise<number> {
  const api = createApi(clientConfig(flags, env));
  const inputs = (flags.input ?? []).map(parseInputFlag);
  const workflow = await readWorkflow(file);
  await checkInputs(workflow, inputs);
  const out = resolve(flags.out);
  const view = createProgressView(process.stderr);
  const interrupt = watchInterrupt();
  const { signal } = interrupt;
  let job: Job | null = null;
  try {
    for (const flag of inputs) {
      const asset = await uploadFile(api, flag.path, { signal });
      setInput(workflow, flag, asset);
      view.note(`uploaded ${flag.path} as asset ${asset.id} for ${flag.node}.${flag.input}`);
    }
    // Not abortable: once sent, only its answer says which job to cancel.
    job = await submit(api, workflow);
    view.note(`job ${job.id} submitted`);
    if (signal.aborted) return await cancelOnInterrupt(api, job, view);
    const final = await followJob(api, job, { signal, onUpdate: view.update, onNote: view.note });
    view.update(final);
    view.stop();
    let saved: SavedOutput[] = [];
    if (final.status === 'succeeded') saved = await downloadOutputs(api, final.outputs, out, signal);
    if (flags.json) process.stdout.write(`${JSON.stringify({ job: final, files: saved }, null, 2)}\n`);
    else for (const file of saved) process.stdout.write(`${file.path}\n`);
    if (final.status === 'succeeded') return EXIT_OK;
    process.stderr.write(`graphrun: ${jobFailure(final)}\n`);
    return EXIT_FAILED;
  } catch (err) {
    if (!signal.aborted || !isAbort(err)) throw err;
    if (job) return await cancelOnInterrupt(api, job, view);
    view.stop();
    process.stderr.write('graphrun: interrupted before the job was submitted\n');
    return EXIT_INTERRUPTED;
  } finally {
    view.stop();
    interrupt.dispose();
  }
}
