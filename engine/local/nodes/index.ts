// The node sets the local engine ships, as arrays to pass to createLocalEngine.
import type { LocalNode } from '../define-node.ts';
import { basicNodeList } from './basic.ts';
import { imageNodes } from './image.ts';
import { musicNodes } from './music-generate.ts';
import { videoNodes } from './video-multiframe.ts';

export const basicNodes: LocalNode[] = basicNodeList;
export { imageNodes, musicNodes, videoNodes };

/** Everything built in: what createLocalEngine runs when given no node list. */
export const builtinNodes: LocalNode[] = [...basicNodes, ...imageNodes, ...musicNodes, ...videoNodes];
