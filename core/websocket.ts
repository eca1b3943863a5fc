// WebSocket hooks of the service. No v2 route speaks WebSocket; the
// cloud-compatible `/ws` stream plugs in here, so until then every upgrade is
// refused with a 404 in the error envelope and adapters need no change later.
import { ApiError, errorResponse } from './errors.ts';
import type { WebSocketHooks } from './types.ts';

export function createWebSocketHooks(): WebSocketHooks {
  return {
    async upgrade() {
      return errorResponse(new ApiError('not_found', 'No WebSocket endpoint at this path.'));
    },
    open(peer) {
      peer.close(1008, 'no endpoint');
    },
    message() {},
    close() {},
  };
}
