// What the pool believes one engine server holds in memory: the models its
// prompts loaded, most recently used last, at most `limit` of them. The
// server evicts models under memory pressure and says nothing about it (no
// route of the real server lists its loaded models: /system_stats only
// gives free VRAM and RAM), so the oldest are forgotten first, as it would
// evict them, and all are forgotten when it restarts or is sent /free.

export interface ModelMemory {
  /** These models were just used on the server (loaded, or found loaded). */
  use(models: readonly string[]): void;
  holds(model: string): boolean;
  /** How many models it holds. */
  size(): number;
  /** Held models, least recently used first. */
  list(): string[];
  forget(): void;
}

export function createModelMemory(limit: number): ModelMemory {
  // A Map keeps insertion order: re-inserting a model moves it to the end (most recent).
  const held = new Map<string, true>();
  return {
    use(models) {
      if (limit <= 0) return;
      for (const m of models) {
        held.delete(m);
        held.set(m, true);
      }
      for (const m of held.keys()) {
        if (held.size <= limit) break;
        held.delete(m);
      }
    },
    holds: (model) => held.has(model),
    size: () => held.size,
    list: () => [...held.keys()],
    forget: () => held.clear(),
  };
}
