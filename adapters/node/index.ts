// Public surface of the Node adapter.
export { incomingMessageToRequest, type NodeRequestOptions, type RequestParts } from './request.ts';
export { BodyTooLargeError, ClientGoneError } from './request-body.ts';
export { BadRequestError } from './request-head.ts';
export { writeResponse } from './response.ts';
export { attachWebSocket, type AttachedWebSocket, type WebSocketOptions } from './websocket.ts';
export {
  createNodeHandler,
  handleNodeRequest,
  serve,
  type MountedRequest,
  type NodeHandler,
  type NodeHandlerOptions,
  type RunningServer,
  type ServeOptions,
} from './server.ts';
export { underPrefix } from './mount-prefix.ts';
export { resolveHostWithDns } from './resolve-host.ts';
