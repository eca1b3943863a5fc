// Reading S3's XML answers. @rgrove/parse-xml is a small, dependency-free,
// conforming parser that needs no runtime module, so it runs wherever fetch
// does; a real parser decodes entities and CDATA in keys and messages the
// way S3 writes them, which a few regular expressions would get wrong.
import { parseXml, XmlElement } from '@rgrove/parse-xml';

function root(text: string): XmlElement | null {
  try {
    return parseXml(text).root;
  } catch {
    return null; // not XML (a proxy's HTML page, an empty body): the caller goes by the status
  }
}

const children = (parent: XmlElement, name: string) => parent.children.filter((c): c is XmlElement => c instanceof XmlElement && c.name === name);
const childText = (parent: XmlElement, name: string) => children(parent, name)[0]?.text;

/** S3's `<Error>`: it comes with error statuses, and within a 200 of CopyObject and CompleteMultipartUpload. */
export function errorOf(text: string): { code: string; message: string } | null {
  const el = root(text);
  if (el?.name !== 'Error') return null;
  return { code: childText(el, 'Code') ?? '', message: childText(el, 'Message') ?? '' };
}

export function uploadIdOf(text: string): string {
  const el = root(text);
  const id = el?.name === 'InitiateMultipartUploadResult' ? childText(el, 'UploadId') : undefined;
  if (!id) throw new Error(`S3 CreateMultipartUpload: no UploadId in the answer: ${text.slice(0, 200)}`);
  return id;
}

export interface ListPage {
  objects: { key: string; lastModified: number }[];
  /** Where the next page starts; null on the last page. */
  nextToken: string | null;
}

export function listPageOf(text: string): ListPage {
  const el = root(text);
  if (el?.name !== 'ListBucketResult') throw new Error(`S3 ListObjectsV2: not a listing: ${text.slice(0, 200)}`);
  const objects = children(el, 'Contents').map((c) => ({
    key: childText(c, 'Key') ?? '',
    lastModified: Date.parse(childText(c, 'LastModified') ?? ''),
  }));
  const truncated = childText(el, 'IsTruncated') === 'true';
  return { objects, nextToken: truncated ? (childText(el, 'NextContinuationToken') ?? null) : null };
}

const escapeText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The body of CompleteMultipartUpload: every part, ascending, with the ETag S3 gave it. */
export function completeBody(parts: { number: number; etag: string }[]): string {
  const sorted = [...parts].sort((a, b) => a.number - b.number);
  const items = sorted.map((p) => `<Part><PartNumber>${p.number}</PartNumber><ETag>${escapeText(p.etag)}</ETag></Part>`);
  return `<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${items.join('')}</CompleteMultipartUpload>`;
}
