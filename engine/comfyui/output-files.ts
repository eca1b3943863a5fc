// Finds every file reference in a worker's ui outputs (history `outputs` or an
// `executed` message) and says what each one is: output type by key and
// extension, content type by extension. Pure: the collector streams them.

import { dict } from '../../lib/dict.ts';
import { isRecord } from '../../lib/is-record.ts';
import type { OutputType } from '../types.ts';

export interface FileRef {
  node_id: string;
  /** The ui key it was listed under (`images`, `video`, `audio`, `gifs`, ...). */
  key: string;
  filename: string;
  subfolder: string;
  /** The worker's folder: `output`, `temp` or `input`. */
  folder: string;
  type: OutputType;
  content_type: string;
  /** Committed as a temporary file, not one of the job's outputs. */
  temporary: boolean;
}

const CONTENT_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  bmp: 'image/bmp',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  avif: 'image/avif',
  svg: 'image/svg+xml',
  exr: 'image/x-exr',
  mp4: 'video/mp4',
  webm: 'video/webm',
  mov: 'video/quicktime',
  mkv: 'video/x-matroska',
  avi: 'video/x-msvideo',
  m4v: 'video/mp4',
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
  flac: 'audio/flac',
  ogg: 'audio/ogg',
  opus: 'audio/opus',
  m4a: 'audio/mp4',
  aac: 'audio/aac',
  txt: 'text/plain; charset=utf-8',
  json: 'application/json',
  csv: 'text/csv',
  md: 'text/markdown',
  glb: 'model/gltf-binary',
  gltf: 'model/gltf+json',
  obj: 'model/obj',
  fbx: 'application/octet-stream',
  stl: 'model/stl',
  latent: 'application/octet-stream',
  safetensors: 'application/octet-stream',
};

const extOf = (name: string) => /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase() ?? '';

export function contentTypeOf(filename: string): string {
  return CONTENT_TYPES[extOf(filename)] ?? 'application/octet-stream';
}

/**
 * The output type: the file's own kind (by extension) first, then the ui key
 * it was listed under. `animated`: the node flagged its images as animations
 * (SaveAnimatedPNG/WEBP show `animated: [true]` beside `images`): video.
 */
export function outputTypeOf(key: string, filename: string, animated = false): OutputType {
  const ext = extOf(filename);
  if (ext === 'latent') return 'latent';
  const mime = CONTENT_TYPES[ext];
  if (animated && mime?.startsWith('image/')) return 'video';
  if (mime === 'image/gif' || mime === 'image/webp') {
    // An animation listed as video (VHS `gifs`, SaveAnimatedWEBP) is a video.
    return /video|gif|animat/i.test(key) ? 'video' : 'image';
  }
  if (mime?.startsWith('image/')) return 'image';
  if (mime?.startsWith('video/')) return 'video';
  if (mime?.startsWith('audio/')) return 'audio';
  if (mime?.startsWith('text/') || ext === 'json') return 'text';
  if (mime) return 'file';
  if (/^images?$/i.test(key)) return 'image';
  if (/video|gif/i.test(key)) return 'video';
  if (/audio/i.test(key)) return 'audio';
  if (/latent/i.test(key)) return 'latent';
  if (/text/i.test(key)) return 'text';
  return 'file';
}

/** A ui value entry that names a file: `{filename, subfolder?, type?}`. */
function asRef(v: unknown): { filename: string; subfolder: string; folder: string } | null {
  if (!isRecord(v) || typeof v.filename !== 'string' || v.filename === '') return null;
  return {
    filename: v.filename,
    subfolder: typeof v.subfolder === 'string' ? v.subfolder : '',
    folder: typeof v.type === 'string' ? v.type : 'output',
  };
}

/** Whether an input takes a file by name: the reference flags these (`image_upload`, `video_upload`, `audio_upload`, `upload`). */
export function hasUploadFlag(options: Record<string, unknown> | undefined): boolean {
  return !!options && Object.keys(options).some((k) => /(^|_)upload$/.test(k) && !!options[k]);
}

/** Text a node showed (`ui.text`, e.g. a text-preview node): [node id, index, text] in node and list order. */
export function textsOf(outputs: Record<string, unknown>): Array<[string, number, string]> {
  const texts: Array<[string, number, string]> = [];
  for (const [node_id, ui] of Object.entries(outputs)) {
    if (!isRecord(ui) || ui.text === undefined) continue;
    const items = Array.isArray(ui.text) ? ui.text : [ui.text];
    items.forEach((t, i) => {
      if (typeof t === 'string') texts.push([node_id, i, t]);
    });
  }
  return texts;
}

/** Every file reference of every node, in node and list order; non-file ui values (text strings, flags) are not files. */
export function fileRefsOf(outputs: Record<string, unknown>): FileRef[] {
  const refs: FileRef[] = [];
  for (const [node_id, ui] of Object.entries(outputs)) {
    if (!isRecord(ui)) continue;
    // One flag for the node's images, or one per image.
    const animated = Array.isArray(ui.animated) ? ui.animated : [];
    for (const [key, value] of Object.entries(ui)) {
      const items = Array.isArray(value) ? value : [value];
      for (const [i, item] of items.entries()) {
        const ref = asRef(item);
        if (!ref) continue;
        refs.push({
          node_id,
          key,
          ...ref,
          type: outputTypeOf(key, ref.filename, key === 'images' && (animated[i] ?? animated[0]) === true),
          content_type: contentTypeOf(ref.filename),
          temporary: ref.folder !== 'output',
        });
      }
    }
  }
  return refs;
}

/** The node's ui with each file reference `rename` answers for named so; everything else as it was. */
export function renameRefs(node_id: string, ui: Record<string, unknown>, rename: (ref: FileRef) => string | null): Record<string, unknown> {
  const refs = new Map(fileRefsOf({ [node_id]: ui }).map((r) => [`${r.key}\0${r.folder}\0${r.subfolder}\0${r.filename}`, r]));
  const out = dict<unknown>();
  for (const [key, value] of Object.entries(ui)) {
    const one = (item: unknown) => {
      const ref = asRef(item);
      const found = ref && refs.get(`${key}\0${ref.folder}\0${ref.subfolder}\0${ref.filename}`);
      const name = found ? rename(found) : null;
      return name !== null && name !== ref!.filename ? { ...(item as Record<string, unknown>), filename: name } : item;
    };
    out[key] = Array.isArray(value) ? value.map(one) : one(value);
  }
  return out;
}
