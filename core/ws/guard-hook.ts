// For adapters wiring a runtime's socket events to the service's WebSocket
// hooks (core/types.ts WebSocketHooks): a hook that throws must not take the
// process down from inside the runtime's event handler, so the error is
// logged and the peer kept.
import { errorText } from '../log.ts';
import type { Logger, WsPeer } from '../types.ts';

export type HookName = 'open' | 'message' | 'close';

/** Calls `hook` of the service for `peer`; whatever it throws is logged. */
export function guardHook<P extends WsPeer>(logger: Logger, hook: HookName, peer: P, call: (peer: P) => void): void {
  try {
    call(peer);
  } catch (err) {
    logger.error(`websocket ${hook} hook failed`, { peer: peer.id, error: errorText(err) });
  }
}
