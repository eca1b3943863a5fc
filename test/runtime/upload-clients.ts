// Uploads from a Node process of their own, as a real client sends them: the
// server under test answers in another event loop (or runtime), so an answer
// sent before the body is read races the client's writes as it does in
// production (in one process the two take turns and the race never shows).
// Run as `node --import tsx upload-clients.ts <json>` by raw-clients.ts'
// `uploadsFromAnotherProcess`; prints one JSON line: the outcome of each upload.

/** One batch: `count` uploads of `size` file bytes, one after another or all at once. */
export interface UploadBatch {
  url: string;
  /** The multipart field of the file: `file` (v2) or `image` (cloud). */
  field: string;
  size: number;
  count: number;
  concurrent: boolean;
  headers: Record<string, string>;
}

/** What a client got: the status and body, or the error fetch threw (its cause's code: EPIPE, ECONNRESET). */
export type UploadOutcome = { status: number; body: string } | { error: string };

async function upload(batch: UploadBatch): Promise<UploadOutcome> {
  const form = new FormData();
  form.append('content_type', 'application/octet-stream');
  form.append('file_path', 'early.bin');
  form.append(batch.field, new Blob([new Uint8Array(batch.size).fill(0x5a)]), 'early.png');
  try {
    const res = await fetch(batch.url, { method: 'POST', headers: batch.headers, body: form });
    return { status: res.status, body: await res.text() };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    return { error: e.cause?.code ?? e.cause?.message ?? e.message };
  }
}

async function run(batch: UploadBatch): Promise<UploadOutcome[]> {
  if (batch.concurrent) return Promise.all(Array.from({ length: batch.count }, () => upload(batch)));
  const outcomes: UploadOutcome[] = [];
  for (let i = 0; i < batch.count; i++) outcomes.push(await upload(batch));
  return outcomes;
}

const batches = JSON.parse(process.argv[2] ?? '[]') as UploadBatch[];
const results: UploadOutcome[][] = [];
for (const batch of batches) results.push(await run(batch));
process.stdout.write(`${JSON.stringify(results)}\n`);
