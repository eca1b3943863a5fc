// In-process EngineServerStore over a map, for one process (tests, examples).
// Semantics mirror storage/sql/engine-server-store.ts; rows are copied out so
// a caller cannot change what is stored.
import { type EngineServerRecord, type EngineServerStore, normalizeServerUrl } from '../types.ts';

export function createMemoryEngineServerStore(): EngineServerStore {
  const rows = new Map<string, EngineServerRecord>();
  const copy = (row: EngineServerRecord | undefined) => (row ? { ...row } : null);

  return {
    async listEngineServers(deployment) {
      return [...rows.values()]
        .filter((r) => r.deployment === deployment)
        .sort((a, b) => a.created_at - b.created_at || a.url.localeCompare(b.url))
        .map((r) => ({ ...r }));
    },
    async getEngineServer(id) {
      return copy(rows.get(id));
    },
    async addEngineServer({ id, deployment, url, now }) {
      const normal = normalizeServerUrl(url);
      const known = [...rows.values()].find((r) => r.deployment === deployment && r.url === normal);
      if (known) {
        if (known.state === 'draining') Object.assign(known, { state: 'active', updated_at: now });
        return { server: { ...known }, created: false };
      }
      const row: EngineServerRecord = { id, deployment, url: normal, state: 'active', created_at: now, updated_at: now };
      rows.set(id, row);
      return { server: { ...row }, created: true };
    },
    async setEngineServerState(id, state, now) {
      const row = rows.get(id);
      if (!row) return null;
      if (row.state !== state) Object.assign(row, { state, updated_at: now });
      return { ...row };
    },
    async removeEngineServer(id) {
      const row = rows.get(id);
      rows.delete(id);
      return copy(row);
    },
  };
}
