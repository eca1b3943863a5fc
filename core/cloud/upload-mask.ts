// POST /upload/mask: multipart `image` (the mask, a PNG), `original_ref`
// (JSON `{filename, subfolder?, type?}` naming one of the caller's files),
// `type` (of the result: input by default, temp, output), `subfolder`
// (ignored) and `overwrite` (no effect). The original's pixels get the mask's
// alpha channel (mask-alpha.ts) and the PNG is stored as a new file of the
// caller, answered as `{name, subfolder: '', type, metadata}`. A bad
// original_ref or an undecodable image is a 400, and so is an image whose
// decoding would take more memory than maxJobMemoryBytes (found from its
// header, before anything is inflated), as the contract answers images
// beyond its size limits; an original the caller does not have is a 404, a
// body beyond the upload limit a 413.

import { concatBytes } from '../../lib/bytes.ts';
import { isRecord } from '../../lib/is-record.ts';
import type { AccountRecord, AssetRecord } from '../../storage/types.ts';
import { stageBlob } from '../assets/ingest.ts';
import type { ServiceContext } from '../context.ts';
import { invalid, notFound } from '../errors.ts';
import type { MultipartPart } from '../http/multipart.ts';
import { cloudAccount } from './auth.ts';
import { findByFileName } from './file-names.ts';
import { checkFileName, checkSubfolder, fileType, stripAnnotation } from './file-params.ts';
import { applyMaskAlpha, MaskInputError } from './mask-alpha.ts';
import { checkOverwrite, readUploadForm } from './upload-form.ts';
import { storeUpload } from './upload-store.ts';

async function collect(chunks: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  // Each chunk is a view valid until the next one: copied.
  for await (const chunk of chunks) parts.push(chunk.slice());
  return concatBytes(parts);
}

async function* chunksOf(stream: ReadableStream<Uint8Array>): AsyncIterable<Uint8Array> {
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read().catch(async (err) => {
      await reader.cancel().catch(() => undefined);
      throw err;
    });
    if (done) return;
    yield value;
  }
}

/** `original_ref` as the reference's `{filename, subfolder, type}`; returns the file name to look up. */
export function parseOriginalRef(raw: string | undefined): string {
  const field = 'original_ref';
  if (raw === undefined || raw.trim() === '') throw invalid(`${field}: is required`, field, 'is required');
  let ref: unknown;
  try {
    ref = JSON.parse(raw);
  } catch {
    throw invalid(`${field}: is not valid JSON; send {"filename": ..., "subfolder": ..., "type": ...}`, field, 'not JSON');
  }
  if (!isRecord(ref)) {
    throw invalid(`${field}: must be a JSON object {"filename", "subfolder", "type"}`, field, 'wrong type');
  }
  const { filename, subfolder, type } = ref;
  if (type !== undefined && type !== null && typeof type !== 'string') {
    throw invalid(`${field}.type: must be a string`, `${field}.type`, 'wrong type');
  }
  fileType(type as string | null | undefined, `${field}.type`, 'input');
  checkSubfolder(subfolder, `${field}.subfolder`);
  return stripAnnotation(checkFileName(filename, `${field}.filename`));
}

async function originalBytes(ctx: ServiceContext, account: AccountRecord, name: string): Promise<[AssetRecord, Uint8Array]> {
  const missing = () => notFound(`original_ref: you have no file named "${name}".`);
  const asset = await findByFileName(ctx, account.id, name);
  if (!asset) throw missing();
  if (asset.size_bytes > ctx.config.maxUploadBytes) {
    throw invalid(`original_ref: the original is larger than ${ctx.config.maxUploadBytes} bytes`, 'original_ref', 'too large');
  }
  const body = await ctx.blobs.get(asset.blob_key);
  if (!body) throw missing();
  return [asset, await collect(chunksOf(body))];
}

export async function uploadMask(request: Request, ctx: ServiceContext): Promise<Response> {
  const account = await cloudAccount(request, ctx);
  const form = await readUploadForm<Uint8Array>(request, ctx, {
    fields: ['type', 'overwrite', 'subfolder', 'original_ref'],
    take: (part: MultipartPart) => collect(part.body),
    drop: async () => {},
  });
  const type = fileType(form.fields.type, 'type', 'input');
  checkOverwrite(form.fields.overwrite);
  checkSubfolder(form.fields.subfolder, 'subfolder');
  const name = parseOriginalRef(form.fields.original_ref);
  if (form.file.length === 0) throw invalid('image: the file is empty', 'image', 'is empty');
  const [original, bytes] = await originalBytes(ctx, account, name);
  let png: Uint8Array;
  try {
    png = applyMaskAlpha(bytes, form.file, ctx.config.maxJobMemoryBytes);
  } catch (err) {
    if (!(err instanceof MaskInputError)) throw err;
    const field = err.which === 'mask' ? 'image' : 'original_ref';
    if (err.tooLarge) {
      const { width, height, bytes: bytes_needed, maxBytes: max_bytes } = err.tooLarge;
      const whose = err.which === 'mask' ? 'the mask' : 'the original';
      const message = `${field}: ${whose} is ${width}x${height} and masking it needs ${bytes_needed} bytes of memory; this service allows ${max_bytes}`;
      throw invalid(message, field, 'too large', { width, height, bytes_needed, max_bytes });
    }
    const what = err.which === 'mask' ? 'the mask is not a valid PNG image' : 'the original is not a usable PNG image';
    throw invalid(`${field}: ${what}: ${err.message}`, field, 'bad image');
  }
  const staged = await stageBlob(
    ctx,
    (async function* () {
      yield png;
    })(),
  );
  const result = await storeUpload(ctx, request, account, staged, { fileName: 'mask.png', contentType: 'image/png', type });
  return Response.json(
    {
      name: result.name,
      subfolder: '',
      type: result.type,
      metadata: { is_mask: true, original_hash: original.hash?.slice('blake3:'.length) ?? null },
    },
    { headers: { 'Cache-Control': 'no-store' } },
  );
}
