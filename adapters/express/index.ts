// Public surface of the Express adapter: the middleware, and WebSockets on
// the http.Server Express listens on (`attachWebSocket(server, service,
// { mountPrefix: '/graph' })` serves /graph/ws).
export { graphrun, type ExpressOptions, type GraphrunMiddleware } from './middleware.ts';
export type { ExpressErrorHandler, ExpressHandler, ExpressRequest } from './express-types.ts';
export { attachWebSocket, type AttachedWebSocket, type WebSocketOptions } from '../node/websocket.ts';
