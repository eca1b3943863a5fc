// Public surface of the Express adapter: the middleware, and WebSockets on
// the http.Server Express listens on (`attachWebSocket(server, service,
// { mountPrefix: '/graph' })` serves /graph/ws).

export { type AttachedWebSocket, attachWebSocket, type WebSocketOptions } from '../node/websocket.ts';
export type { ExpressErrorHandler, ExpressHandler, ExpressRequest } from './express-types.ts';
export { type ExpressOptions, type GraphrunMiddleware, graphrun } from './middleware.ts';
