// All image nodes of the local engine, for the node index to register.
import type { LocalNode } from '../define-node.ts';
import { imageBasicNodes } from './image-basic.ts';
import { imageIoNodes } from './image-io.ts';
import { loadImageFromUrl } from './load-image-url.ts';

export const imageNodes: LocalNode[] = [...imageBasicNodes, ...imageIoNodes, loadImageFromUrl];
