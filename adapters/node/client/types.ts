// The parts of the v2 contract's objects the client reads (Job, Progress,
// Output, Asset), typed structurally: any server speaking the contract
// answers them, with more fields the client passes through untouched.

export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'canceling', 'canceled', 'failed', 'expired'] as const;
const TERMINAL = new Set(['succeeded', 'canceled', 'failed', 'expired']);

export const isTerminal = (status: string): boolean => TERMINAL.has(status);

export interface Progress {
  value: number;
  nodes_done: number;
  nodes_total: number;
  current_node?: string | null;
  current_node_class?: string | null;
  step?: number | null;
  steps?: number | null;
  message?: string | null;
}

export interface Output {
  id: string;
  node_id: string;
  name: string;
  type: string;
  content_type: string;
  size_bytes: number;
}

export interface JobError {
  code: string;
  message: string;
  node_id?: string | null;
  class_type?: string | null;
}

export interface Job {
  id: string;
  status: string;
  created_at: string;
  queue_position: number | null;
  progress: Progress | null;
  outputs: Output[];
  error: JobError | null;
  urls: { self: string; events: string; cancel: string };
}

/** What a progress display shows: the status, the queue position and the latest progress snapshot. */
export type JobState = Pick<Job, 'status' | 'queue_position' | 'progress'>;

export interface Asset {
  id: string;
  hash: string | null;
  size_bytes: number;
  content_type: string;
  file_path?: string | null;
}
