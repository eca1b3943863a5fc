// Public surface of the Deno adapter.
export { type DenoHandler, type DenoHandlerOptions, denoHandler, type RunningDenoServer, type ServeOptions, serve } from './server.ts';
