// The generation providers a service is given: music for /proxy/musicgen and
// the music partner node, video for /proxy/videogen and the video node. The
// core and the nodes depend on these interfaces only.
import type { MusicProvider } from './music.ts';
import type { VideoProvider } from './video.ts';

export type * from './music.ts';
export type * from './video.ts';

export interface Providers {
  music: MusicProvider;
  video: VideoProvider;
}
