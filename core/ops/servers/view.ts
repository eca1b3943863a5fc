// An engine server as /ops/servers answers it: the stored row (times as ISO
// strings) with what this instance's engine sees of it now, `live` (null
// when its pool does not have it: a draining server after a restart, or an
// instance whose engine has no pool).
import type { EngineServerStatus } from '../../../engine/types.ts';
import type { EngineServerRecord } from '../../../storage/types.ts';
import { isoTime } from '../../iso-time.ts';

export function liveView(s: EngineServerStatus) {
  return {
    healthy: s.healthy,
    busy: s.busy,
    slots: s.slots,
    state: s.state ?? 'active',
    warming: s.warming ?? false,
    models: s.models ?? [],
  };
}

export function serverView(row: EngineServerRecord, live: EngineServerStatus | undefined) {
  return {
    id: row.id,
    deployment: row.deployment,
    url: row.url,
    state: row.state,
    created_at: isoTime(row.created_at),
    updated_at: isoTime(row.updated_at),
    live: live ? liveView(live) : null,
  };
}
