// Maps one worker WebSocket message of a prompt onto our engine events, and
// says whether it ends the prompt. Pure: the job runner applies the result.
// progress_state is folded away: `progress` carries the same step counts and
// our progress tracker counts nodes from executing/cached/executed.
import type { EngineEvent, Workflow } from '../types.ts';
import type { BinaryFrame } from './binary-frames.ts';

export type Ending =
  | { kind: 'success' }
  /** `executing` with node null: the worker is done with the prompt (history is written). */
  | { kind: 'finished' }
  | { kind: 'error'; data: Record<string, unknown> }
  | { kind: 'interrupted'; data: Record<string, unknown> };

export interface Mapped {
  events: EngineEvent[];
  ending?: Ending;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null);
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

export function mapMessage(msg: { type: string; data: Record<string, unknown> }, workflow: Workflow): Mapped {
  const d = msg.data;
  const classOf = (id: string) => workflow[id]?.class_type ?? '';
  switch (msg.type) {
    case 'execution_start':
      return { events: [{ type: 'execution_start' }] };
    case 'execution_cached':
      return { events: [{ type: 'cached', node_ids: Array.isArray(d.nodes) ? d.nodes.map(String) : [] }] };
    case 'executing': {
      const node = str(d.node);
      if (node === null) return { events: [], ending: { kind: 'finished' } };
      return { events: [{ type: 'executing', node_id: node, class_type: classOf(node) }] };
    }
    case 'progress': {
      const node = str(d.node);
      return node === null ? { events: [] } : { events: [{ type: 'progress', node_id: node, value: num(d.value), max: num(d.max) }] };
    }
    case 'executed': {
      const node = str(d.node);
      const output = d.output && typeof d.output === 'object' ? (d.output as Record<string, unknown>) : {};
      return node === null ? { events: [] } : { events: [{ type: 'executed', node_id: node, output }] };
    }
    case 'notification':
      // Worker-wide messages (no prompt id): the pool hands them to the prompt it is running.
      return typeof d.value === 'string' && d.value ? { events: [{ type: 'notification', value: d.value }] } : { events: [] };
    case 'execution_success':
      return { events: [], ending: { kind: 'success' } };
    case 'execution_error':
      return { events: [], ending: { kind: 'error', data: d } };
    case 'execution_interrupted':
      return { events: [], ending: { kind: 'interrupted', data: d } };
    default:
      // progress_state, status, feature_flags and unknown types add nothing per job.
      return { events: [] };
  }
}

/** A binary frame as an event; `runningNode` names a type-1 preview, which does not name its node. */
export function mapBinary(frame: BinaryFrame, runningNode: string | null): EngineEvent | null {
  if (frame.kind === 'text') return { type: 'text', node_id: frame.node_id, text: frame.text };
  if (frame.kind === 'preview') {
    const node = frame.node_id ?? runningNode;
    return node === null ? null : { type: 'preview', node_id: node, format: frame.format, bytes: frame.bytes.slice() };
  }
  return null;
}
