// The engine servers an operator registered at run time (POST /ops/servers),
// kept so that a restart and every runner sharing the storage see the same
// set. One row per server of a deployment, named by its normalized URL; the
// pool itself stays the engine's: this only says who belongs to it and
// whether it is draining.
//
// Adding a URL the deployment already has returns that row, made active again
// if it was draining: the same as the engine's addServer, so that "add" is
// always safe to repeat and is how an operator undoes a drain.

/** 'draining': the server finishes what it runs and takes no new job. */
export type EngineServerState = 'active' | 'draining';

export interface EngineServerRecord {
  id: string;
  /** The deployment the server serves ('default' until deployments exist). */
  deployment: string;
  /** Normalized (normalizeServerUrl): the name every process gives the server. */
  url: string;
  state: EngineServerState;
  /** Epoch ms. */
  created_at: number;
  /** Epoch ms of the last change of state. */
  updated_at: number;
}

export interface NewEngineServer {
  /** A fresh uuid; kept only when the URL is new to the deployment. */
  id: string;
  deployment: string;
  url: string;
  now: number;
}

export interface EngineServerStore {
  /** The deployment's servers, oldest first. */
  listEngineServers(deployment: string): Promise<EngineServerRecord[]>;
  getEngineServer(id: string): Promise<EngineServerRecord | null>;
  /** Registers the URL; an existing one is returned (`created: false`), reactivated if it was draining. */
  addEngineServer(server: NewEngineServer): Promise<{ server: EngineServerRecord; created: boolean }>;
  /** Sets the state; null for an unknown id. */
  setEngineServerState(id: string, state: EngineServerState, now: number): Promise<EngineServerRecord | null>;
  /** Forgets the server; the removed row, or null for an unknown id. */
  removeEngineServer(id: string): Promise<EngineServerRecord | null>;
}

/**
 * The engine's own naming of a server (engine/comfyui: the base URL without
 * trailing slashes), so a stored URL and the pool's member are one string.
 */
export function normalizeServerUrl(url: string): string {
  return url.trim().replace(/\/+$/, '');
}
