// The local generation providers, Web APIs only: the music synthesizer and
// the multi-frame video renderer the service uses unless given others.
export { createLocalMusicProvider } from './music/provider.ts';
export { createLocalVideoProvider, type LocalVideoOptions, type LocalVideoProvider } from './video/provider.ts';
