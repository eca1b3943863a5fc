// The vendor providers, on Node (undici): music and multi-frame video
// generation forwarded to an upstream HTTP service.

export type { HttpDispatcher } from '../../lib/http-dispatcher.ts';
export { createUpstreamMusicProvider, type UpstreamMusicOptions, type UpstreamMusicProvider } from './music.ts';
export { createUpstreamVideoProvider, type UpstreamVideoOptions, type UpstreamVideoProvider } from './video.ts';
