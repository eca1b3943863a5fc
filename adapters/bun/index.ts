// Public surface of the Bun adapter.
export { type BunHandlerOptions, type BunHandlers, bunHandlers, type RunningBunServer, type ServeOptions, serve } from './server.ts';
