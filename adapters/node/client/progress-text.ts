// The words a progress display shows for a job's state, the same on the live
// bar and on plain lines: the queue position while queued, then "node x of
// y" with the current node's class and its step progress.
import type { JobState, Progress } from './types.ts';

/** The node being worked on, counted from 1 (every node once they are all done). */
function nodeNumber(p: Progress): number {
  if (p.nodes_done >= p.nodes_total) return p.nodes_total;
  return p.nodes_done + (p.current_node != null ? 1 : 0);
}

function nodeText(p: Progress): string {
  const n = nodeNumber(p);
  if (p.nodes_total <= 0 || n === 0) return 'starting';
  let text = `node ${n} of ${p.nodes_total}`;
  if (p.nodes_done < p.nodes_total) {
    const name = p.current_node_class ?? (p.current_node != null ? `#${p.current_node}` : null);
    if (name) text += ` ${name}`;
    if (p.step != null && p.steps) text += ` step ${p.step}/${p.steps}`;
  }
  return text;
}

/** What the job is at, e.g. "queued (position 2)", "node 2 of 3 ImageInvert step 4/10", "node 3 of 3, succeeded". */
export function stageText(state: JobState): string {
  const { status, queue_position: position, progress } = state;
  if (status === 'queued') return position != null ? `queued (position ${position})` : 'queued';
  if (status === 'running') return progress ? nodeText(progress) : 'running';
  return progress && progress.nodes_total > 0 ? `${nodeText(progress)}, ${status}` : status;
}

/** Whole percent, 100 once succeeded; never more than 100. */
export function percentOf(state: JobState): number {
  if (state.status === 'succeeded') return 100;
  const value = state.progress?.value ?? 0;
  return Math.max(0, Math.min(100, Math.floor(value * 100)));
}
