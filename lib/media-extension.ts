// The file extension a media type is usually saved with, for names made of an
// asset (the cloud surface's content-addressed names, inputs staged onto an
// engine server) when the asset's own name has none.
const BY_TYPE: Record<string, string> = {
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/webp': '.webp',
  'image/gif': '.gif',
  'video/mp4': '.mp4',
  'video/webm': '.webm',
  'audio/wav': '.wav',
  'audio/mpeg': '.mp3',
  'audio/flac': '.flac',
  'text/plain': '.txt',
  'application/json': '.json',
};

/** `.png` for `image/png; charset=...`, any case; '' for a type without a usual extension. */
export function extensionForType(contentType: string): string {
  return BY_TYPE[contentType.split(';')[0].trim().toLowerCase()] ?? '';
}
