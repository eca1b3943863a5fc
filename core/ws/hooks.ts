// WebSocket hooks of the service: the cloud-compatible `/ws` stream (also at
// `/api/ws`). The upgrade authenticates the `token` query parameter, else
// the X-API-Key or Authorization header (401 in the cloud `{code, message}`
// shape when refused), takes `clientId` as the connection's `sid`, and
// reads the queue count the first `status` message carries, so a peer is
// greeted and registered in one step when it opens.
// Everything after that is the account's live channel (core/ws/connections.ts).

import { isRecord } from '../../lib/is-record.ts';
import { webSocketAccount } from '../cloud/auth.ts';
import { cloudError } from '../cloud/respond.ts';
import { serverFeatures } from '../cloud/system.ts';
import type { ServiceContext } from '../context.ts';
import { stoppedRefusal } from '../deployments/gate.ts';
import { ApiError } from '../errors.ts';
import { errorText } from '../log.ts';
import type { WebSocketHooks, WsPeer } from '../types.ts';
import { createConnections, queueRemaining, statusFrame } from './connections.ts';
import { jsonFrame } from './frames.ts';

export interface WebSocketHookOptions {
  /** Unsent bytes a peer may have before it is closed (1008). Default 8 MiB. */
  maxBufferedBytes?: number;
}

/** What an accepted upgrade hands to `open` through the adapter. */
interface PeerContext {
  account_id: string;
  sid: string;
  queue_remaining: number;
}

const PATHS = new Set(['/ws', '/api/ws']);
const MAX_CLIENT_ID = 256;
/** Clients send only small JSON (feature flags); anything longer is not read. */
const MAX_CLIENT_MESSAGE = 64 * 1024;

function peerContext(peer: WsPeer): PeerContext | null {
  const c = peer.context;
  return isRecord(c) && typeof c.account_id === 'string' && typeof c.sid === 'string' && typeof c.queue_remaining === 'number'
    ? (c as unknown as PeerContext)
    : null;
}

export function createWebSocketHooks(ctx: ServiceContext, opts: WebSocketHookOptions = {}): WebSocketHooks {
  const connections = createConnections(ctx, { maxBufferedBytes: opts.maxBufferedBytes });

  return {
    async upgrade(request) {
      try {
        const url = new URL(request.url);
        if (!PATHS.has(url.pathname.replace(/\/+$/, ''))) {
          throw new ApiError('not_found', 'No WebSocket endpoint at this path: connect to /ws.');
        }
        // A stopped deployment opens nothing, as its HTTP routes answer nothing (deployments/gate.ts).
        if (ctx.deployment.stopped()) throw stoppedRefusal(ctx.deployment);
        const account = await webSocketAccount(request, url, ctx);
        const clientId = url.searchParams.get('clientId');
        if (clientId !== null && clientId.length > MAX_CLIENT_ID) {
          throw new ApiError('invalid_request', `clientId is longer than ${MAX_CLIENT_ID} characters.`);
        }
        // The reference's sid: the client's id when it gave one, else a fresh uuid4 hex.
        const sid = clientId || crypto.randomUUID().replaceAll('-', '');
        const context: PeerContext = { account_id: account.id, sid, queue_remaining: await queueRemaining(ctx, account.id) };
        return { accept: true, context };
      } catch (err) {
        if (err instanceof ApiError) return cloudError(err);
        ctx.logger.error('websocket upgrade failed', { url: request.url, error: errorText(err) });
        return cloudError(new ApiError('upstream_error', 'The service could not open the connection. Try again later.'));
      }
    },

    open(peer) {
      const context = peerContext(peer);
      if (!context) {
        // An adapter that dropped the upgrade's context: nothing says whose events these would be.
        ctx.logger.error('websocket peer opened without its upgrade context', { peer: peer.id });
        return peer.close(1011, 'internal error');
      }
      connections.add(peer, context.account_id, statusFrame(context.queue_remaining, context.sid));
    },

    message(peer, data) {
      if (typeof data !== 'string' || data.length > MAX_CLIENT_MESSAGE) return;
      let message: unknown;
      try {
        message = JSON.parse(data);
      } catch {
        return; // the reference ignores what it cannot parse
      }
      if (!isRecord(message) || message.type !== 'feature_flags') return;
      const flags = isRecord(message.data) ? message.data : {};
      connections.setPreviewMetadata(peer, flags.supports_preview_metadata === true);
      peer.send(jsonFrame('feature_flags', serverFeatures(ctx)));
    },

    close(peer) {
      connections.remove(peer);
    },
  };
}
