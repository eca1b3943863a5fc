// The response overrides a presigned GET carries (S3's response-* query
// parameters, covered by the signature), so a download from the bucket is
// named and typed as the service would serve it.
import type { SignedUrlOptions } from '../types.ts';

/**
 * `inline` with an ASCII fallback name and the UTF-8 one (RFC 6266), as the
 * service's own content route sends it. Written again here rather than
 * imported: an implementation uses the core's types, never its code.
 */
export function contentDisposition(filename: string): string {
  const name = filename.split('/').pop() || 'content';
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  // encodeURIComponent throws on a lone surrogate; such a name gets U+FFFD instead.
  const wellFormed = name.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
  // RFC 5987 lets `'()*` through only percent-encoded; encodeURIComponent leaves them as they are.
  const encoded = encodeURIComponent(wellFormed).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `inline; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

export function signedUrlQuery({ filename, contentType }: Pick<SignedUrlOptions, 'filename' | 'contentType'>): Record<string, string> {
  const query: Record<string, string> = {};
  if (filename !== undefined) query['response-content-disposition'] = contentDisposition(filename);
  if (contentType !== undefined) query['response-content-type'] = contentType;
  return query;
}
