// Translates one account's live channel (AccountEvents of its jobs) into the
// messages of the reference engine's `/ws` stream, with its fields and in its
// order. Pure: it keeps per-job state (nodes done, node progress, outputs
// committed) only while a job runs, and says "the queue changed" rather than
// counting it, so the connection layer does the one storage read.
import type { EngineEvent } from '../../engine/types.ts';
import type { AccountEvent } from '../jobs/hub.ts';
import { type PreviewFormat, type PreviewMetadata, textFrame } from './frames.ts';
import { executionErrorData, interruptedData, type JobState, type NodeState, newJobState, progressStateData } from './job-state.ts';
import { rewriteOutputRefs } from './output-refs.ts';

export type Outgoing =
  /** A text frame `{type, data}`, the same for every peer. */
  | { kind: 'json'; type: string; data: Record<string, unknown> }
  /** A preview: PREVIEW_IMAGE_WITH_METADATA or PREVIEW_IMAGE, depending on the peer's flags. */
  | { kind: 'preview'; meta: PreviewMetadata; format: PreviewFormat; bytes: Uint8Array }
  /** A binary frame, the same for every peer. */
  | { kind: 'binary'; frame: Uint8Array }
  /** The account's queue changed: send `status` with a fresh queue_remaining. */
  | { kind: 'queue' };

export interface MessageTranslator {
  translate(event: AccountEvent): Outgoing[];
  /** Jobs whose state is kept (those between their first event and their end). */
  readonly jobCount: number;
  /** Their ids. */
  jobIds(): string[];
}

/** Jobs followed at once per account; far above what any tier runs in parallel. */
const MAX_JOBS = 1024;

const json = (type: string, data: Record<string, unknown>): Outgoing => ({ kind: 'json', type, data });

export function createMessageTranslator(now: () => number): MessageTranslator {
  const jobs = new Map<string, JobState>();

  const stateOf = (id: string): JobState => {
    let s = jobs.get(id);
    if (!s) {
      s = newJobState();
      jobs.set(id, s);
      // A job whose end never came (its instance died) must not stay forever: the oldest goes.
      if (jobs.size > MAX_JOBS) jobs.delete(jobs.keys().next().value!);
    }
    return s;
  };

  const progressState = (prompt_id: string, s: JobState): Outgoing => json('progress_state', progressStateData(prompt_id, s));

  /** Marks a node done and says so in a progress_state (the reference's finish_progress). */
  function finish(prompt_id: string, s: JobState, node: string, out: Outgoing[]): void {
    const n = s.nodes.get(node) ?? { value: 0, max: 1, state: 'pending' as NodeState };
    s.nodes.set(node, { value: n.max, max: n.max, state: 'finished' });
    s.executed.add(node);
    if (s.current?.node === node) s.current = null;
    out.push(progressState(prompt_id, s));
  }

  function engine(prompt_id: string, e: EngineEvent): Outgoing[] {
    const s = stateOf(prompt_id);
    s.started = true;
    const out: Outgoing[] = [];
    switch (e.type) {
      case 'execution_start':
        out.push(json('execution_start', { prompt_id, timestamp: now() }));
        break;
      case 'cached': {
        for (const id of e.node_ids) {
          s.nodes.set(id, { value: 1, max: 1, state: 'finished' });
          s.executed.add(id);
        }
        // The reference says it once, before any node runs; a node served later (a twin) shows in progress_state.
        if (!s.cachedSent) {
          s.cachedSent = true;
          out.push(json('execution_cached', { nodes: [...e.node_ids], prompt_id, timestamp: now() }));
        }
        if (e.node_ids.length > 0) out.push(progressState(prompt_id, s));
        break;
      }
      case 'executing':
        // A node without ui sends no `executed`: the next node starting is when it finished.
        if (s.current) finish(prompt_id, s, s.current.node, out);
        s.current = { node: e.node_id, class_type: e.class_type };
        s.nodes.set(e.node_id, { value: 0, max: 1, state: 'running' });
        out.push(progressState(prompt_id, s));
        out.push(json('executing', { node: e.node_id, display_node: e.node_id, prompt_id }));
        break;
      case 'progress':
        s.nodes.set(e.node_id, { value: e.value, max: e.max, state: 'running' });
        out.push(progressState(prompt_id, s));
        out.push(json('progress', { value: e.value, max: e.max, prompt_id, node: e.node_id }));
        break;
      case 'executed': {
        const output = rewriteOutputRefs(e.output, e.node_id, s.outputs);
        s.outputs = s.outputs.filter((a) => a.node_id !== e.node_id);
        out.push(json('executed', { node: e.node_id, display_node: e.node_id, output, prompt_id }));
        finish(prompt_id, s, e.node_id, out);
        break;
      }
      case 'preview':
        out.push({
          kind: 'preview',
          meta: { node_id: e.node_id, prompt_id, display_node_id: e.node_id, parent_node_id: null, real_node_id: e.node_id },
          format: e.format,
          bytes: e.bytes,
        });
        break;
      case 'text':
        out.push({ kind: 'binary', frame: textFrame(e.node_id, e.text) });
        break;
      case 'notification':
        out.push(json('notification', { value: e.value, id: null, prompt_id }));
        break;
    }
    return out;
  }

  function lifecycle(prompt_id: string, status: string, error: Record<string, unknown> | null | undefined): Outgoing[] {
    const out: Outgoing[] = [];
    if (status === 'queued') {
      // New, or back in the queue after a restart: it starts over.
      jobs.delete(prompt_id);
    } else if (status === 'running') {
      stateOf(prompt_id).started = true;
    } else if (status === 'canceling') {
      // Only a job seen running here: one running on another instance ends there, and its state would never be dropped.
      const s = jobs.get(prompt_id);
      if (s) s.started = true;
    } else {
      const s = jobs.get(prompt_id);
      jobs.delete(prompt_id);
      const started = s?.started ?? false;
      if (status === 'succeeded') {
        if (s?.current) finish(prompt_id, s, s.current.node, out);
        out.push(json('execution_success', { prompt_id, timestamp: now() }));
      } else if (status === 'failed') {
        out.push(json('execution_error', executionErrorData(prompt_id, s, error, now())));
      } else if (status === 'canceled' && started) {
        out.push(json('execution_interrupted', interruptedData(prompt_id, s, now())));
      }
      // The reference ends every run it started with `status` (the queue
      // without it), then `executing` for no node: it counts the queue when it
      // files the run in its history, and only then says the run is over.
      const ended = status === 'succeeded' || ((status === 'failed' || status === 'canceled') && started);
      if (ended) {
        out.push({ kind: 'queue' });
        out.push(json('executing', { node: null, display_node: null, prompt_id }));
        return out;
      }
    }
    out.push({ kind: 'queue' });
    return out;
  }

  return {
    translate(event) {
      switch (event.type) {
        case 'engine':
          return engine(event.job_id, event.event);
        case 'output':
          stateOf(event.job_id).outputs.push(event.asset);
          return [];
        case 'lifecycle':
          return lifecycle(event.job_id, event.status, event.error);
      }
    },
    get jobCount() {
      return jobs.size;
    },
    jobIds: () => [...jobs.keys()],
  };
}
