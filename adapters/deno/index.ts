// Public surface of the Deno adapter.
export { denoHandler, serve, type DenoHandler, type DenoHandlerOptions, type RunningDenoServer, type ServeOptions } from './server.ts';
