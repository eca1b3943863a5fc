// Public surface of the Node adapter.

export { underPrefix } from './mount-prefix.ts';
export { createNativeHasher } from './native-hasher.ts';
export { createProcessMetrics } from './process-metrics.ts';
export { incomingMessageToRequest, type NodeRequestOptions, type RequestParts } from './request.ts';
export { BodyTooLargeError, ClientGoneError } from './request-body.ts';
export { BadRequestError } from './request-head.ts';
export { resolveHostWithDns } from './resolve-host.ts';
export { writeResponse } from './response.ts';
export {
  createNodeHandler,
  handleNodeRequest,
  type MountedRequest,
  type NodeHandler,
  type NodeHandlerOptions,
  type RunningServer,
  type ServeOptions,
  serve,
} from './server.ts';
export { type AttachedWebSocket, attachWebSocket, type WebSocketOptions } from './websocket.ts';
