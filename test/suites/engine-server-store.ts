// EngineServerStore conformance: URLs stored normalized, one row per URL of a
// deployment (adding it again returns that row, reactivating a draining one,
// also when two adds race), listing per deployment oldest first, state
// changes, removal, unknown ids. Part of the MetadataStore suite.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EngineServerStore, MetadataStore } from '../../storage/types.ts';
import type { MakeStore } from './store-fixtures.ts';
import { T0 } from './store-fixtures.ts';

const GPU1 = 'http://gpu-1:8188';
const GPU2 = 'http://gpu-2:8188';
const add = (store: EngineServerStore, url: string, now = T0, deployment = 'default') =>
  store.addEngineServer({ id: crypto.randomUUID(), deployment, url, now });

export function engineServerStoreSuite(make: MakeStore<MetadataStore>): void {
  describe('EngineServerStore', () => {
    let store: EngineServerStore;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      const fixture = await make();
      store = fixture.store.engineServers!;
      cleanup = fixture.cleanup;
      expect(store).toBeDefined();
    });
    afterEach(() => cleanup());

    it('adds a server active, its URL normalized, and lists the deployment oldest first', async () => {
      const a = await add(store, `${GPU2}//`, T0);
      const b = await add(store, GPU1, T0 + 1);
      await add(store, GPU1, T0, 'other');
      expect(a).toEqual({
        created: true,
        server: { id: expect.any(String), deployment: 'default', url: GPU2, state: 'active', created_at: T0, updated_at: T0 },
      });
      expect(b.created).toBe(true);
      expect(await store.listEngineServers('default')).toEqual([a.server, b.server]);
      expect((await store.listEngineServers('other')).map((r) => r.url)).toEqual([GPU1]);
      expect(await store.listEngineServers('none')).toEqual([]);
      expect(await store.getEngineServer(a.server.id)).toEqual(a.server);
    });

    it('adding a known URL returns its row; a draining one becomes active again', async () => {
      const first = await add(store, GPU1, T0);
      expect(await add(store, `${GPU1}/`, T0 + 5)).toEqual({ created: false, server: first.server });
      const drained = await store.setEngineServerState(first.server.id, 'draining', T0 + 10);
      expect(drained).toEqual({ ...first.server, state: 'draining', updated_at: T0 + 10 });
      expect(await add(store, GPU1, T0 + 20)).toEqual({ created: false, server: { ...first.server, state: 'active', updated_at: T0 + 20 } });
      expect(await store.listEngineServers('default')).toHaveLength(1);
    });

    it('two adds of one URL at once make one row', async () => {
      const [x, y] = await Promise.all([add(store, GPU1), add(store, GPU1)]);
      expect(x.server.id).toBe(y.server.id);
      expect([x.created, y.created].sort()).toEqual([false, true]);
      expect(await store.listEngineServers('default')).toHaveLength(1);
    });

    it('sets the state (updated_at moves only with a change) and removes; unknown ids give null', async () => {
      const { server } = await add(store, GPU1, T0);
      expect(await store.setEngineServerState(server.id, 'active', T0 + 1)).toEqual(server);
      expect(await store.setEngineServerState(server.id, 'draining', T0 + 2)).toMatchObject({ state: 'draining', updated_at: T0 + 2 });
      expect(await store.setEngineServerState('nope', 'draining', T0)).toBeNull();
      expect(await store.removeEngineServer(server.id)).toMatchObject({ id: server.id, url: GPU1, state: 'draining' });
      expect(await store.removeEngineServer(server.id)).toBeNull();
      expect(await store.getEngineServer(server.id)).toBeNull();
      expect(await store.listEngineServers('default')).toEqual([]);
    });
  });
}
