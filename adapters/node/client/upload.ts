// Uploads a local file as a v2 asset (POST /api/v2/assets, multipart): the
// bytes stream from disk (a file-backed Blob, never read whole into memory),
// the media type is the flag's or guessed from the extension, and a fresh
// Idempotency-Key makes a retried request safe.
import { openAsBlob } from 'node:fs';
import { basename, extname } from 'node:path';
import type { Api } from './api.ts';
import type { Asset } from './types.ts';

const MEDIA_TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
  '.bmp': 'image/bmp',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
  '.wav': 'audio/wav',
  '.mp3': 'audio/mpeg',
  '.flac': 'audio/flac',
  '.ogg': 'audio/ogg',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
  '.mov': 'video/quicktime',
  '.json': 'application/json',
  '.txt': 'text/plain',
  '.safetensors': 'application/octet-stream',
};

export const mediaTypeOf = (path: string): string => MEDIA_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream';

export interface UploadOptions {
  contentType?: string;
  signal?: AbortSignal;
}

export async function uploadFile(api: Api, path: string, options: UploadOptions = {}): Promise<Asset> {
  const name = basename(path);
  const contentType = options.contentType ?? mediaTypeOf(path);
  const form = new FormData();
  form.set('content_type', contentType);
  form.set('file_path', name);
  form.set('file', await openAsBlob(path, { type: contentType }), name);
  return api.json<Asset>('/api/v2/assets', {
    method: 'POST',
    body: form,
    headers: { 'idempotency-key': crypto.randomUUID() },
    signal: options.signal,
  });
}
