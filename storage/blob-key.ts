// The blob keys every store accepts: letters, digits, `_` and `-`, 4 to 128 of
// them. The fs store makes them path segments, and S3 and inline blobs take
// the same rule, so a key good for one store is good for any other: no dot,
// slash or backslash, so no key can reach a temporary or another folder.
export const BLOB_KEY = /^[A-Za-z0-9_-]{4,128}$/;

export function checkBlobKey(key: string): void {
  if (!BLOB_KEY.test(key)) throw new TypeError(`invalid blob key: ${JSON.stringify(key)}`);
}
