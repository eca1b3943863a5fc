// A chunk's bytes copied, for a store that keeps them past write(): callers
// may reuse their buffer once write resolves. Not `chunk.slice()`: on a Node
// Buffer (what request bodies and fetch streams hand out) slice() is a view.
export const copyBytes = (chunk: Uint8Array): Uint8Array => Uint8Array.prototype.slice.call(chunk);
