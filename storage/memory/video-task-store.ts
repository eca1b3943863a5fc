// In-process VideoTaskStore over a map, composed into the memory metadata
// store. Check and write happen without an await between them, so a
// compare-and-set is atomic on one event loop, like the SQL store's UPDATE.
import type { VideoTaskRecord, VideoTaskStore } from '../types.ts';

// Deep copies in and out: the JSON fields must not alias caller objects.
const copy = (task: VideoTaskRecord): VideoTaskRecord => structuredClone(task);

export function createMemoryVideoTaskStore(): VideoTaskStore {
  const tasks = new Map<string, VideoTaskRecord>();
  return {
    async createVideoTask(task) {
      if (tasks.has(task.id)) throw new Error(`video task ${task.id} already exists`);
      tasks.set(task.id, copy(task));
    },
    async getVideoTask(accountId, id) {
      const task = tasks.get(id);
      return task && task.account_id === accountId ? copy(task) : null;
    },
    async transitionVideoTask(id, from, to, patch) {
      const task = tasks.get(id);
      if (!task || task.state !== from) return false;
      const changes = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
      tasks.set(id, { ...task, ...structuredClone(changes), state: to });
      return true;
    },
    async listVideoTasksByState(states, limit) {
      const wanted = new Set(states);
      return [...tasks.values()]
        .filter((t) => wanted.has(t.state))
        .sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : 1))
        .slice(0, limit)
        .map(copy);
    },
    async deleteExpiredVideoTasks(now, limit) {
      const ids = [...tasks.values()]
        .filter((t) => t.expires_at <= now)
        .slice(0, limit)
        .map((t) => t.id);
      for (const id of ids) tasks.delete(id);
      return ids;
    },
  };
}
