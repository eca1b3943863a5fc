// Public surface of the Bun adapter.
export { bunHandlers, serve, type BunHandlerOptions, type BunHandlers, type RunningBunServer, type ServeOptions } from './server.ts';
