// The states of a video task and the moves between them, as one table.
// `created` is what the POST answers; the task then waits at the provider
// (`queueing`), renders (`processing`) and ends in `success` or `failed`.
export const TASK_STATES = ['created', 'queueing', 'processing', 'success', 'failed'] as const;
export type TaskState = (typeof TASK_STATES)[number];

const MOVES: Record<TaskState, readonly TaskState[]> = {
  created: ['queueing', 'failed'],
  queueing: ['processing', 'failed'],
  processing: ['success', 'failed'],
  success: [],
  failed: [],
};

/** States a restart resumes. */
export const OPEN_STATES: TaskState[] = ['created', 'queueing', 'processing'];

export function canMove(from: TaskState, to: TaskState): boolean {
  return MOVES[from].includes(to);
}

export function isTerminal(state: string): boolean {
  return state === 'success' || state === 'failed';
}
