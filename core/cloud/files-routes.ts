// Cloud-compatible routes (files): node definitions, uploads of images and
// masks into the flat content-addressed namespace, and /view's redirect to a
// signed content URL. Declared without the `/api` prefix; surface.ts serves
// each under `/api` and bare.

import type { Route } from '../http/surface.ts';
import { getNodeClassInfo, getObjectInfo } from './object-info.ts';
import { uploadImage } from './upload-image.ts';
import { uploadMask } from './upload-mask.ts';
import { viewFile } from './view.ts';

export const CLOUD_FILES_ROUTES: Route[] = [
  ['GET', '/object_info', (r, c) => getObjectInfo(r, c)],
  ['GET', '/object_info/:class', (r, c, p) => getNodeClassInfo(r, c, p.class)],
  ['POST', '/upload/image', (r, c) => uploadImage(r, c)],
  ['POST', '/upload/mask', (r, c) => uploadMask(r, c)],
  ['GET', '/view', (r, c) => viewFile(r, c)],
];
