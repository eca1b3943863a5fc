// POST /upload/image: multipart `image` (the file), `type` (input by default,
// temp, or output as the reference also allows; anything else 400),
// `overwrite` ('true' / 'false'; no effect: a name is its content's hash) and
// `subfolder` (accepted, ignored: the namespace is flat). The file streams
// through blake3 into the blob store and becomes an asset of the caller named
// `<hash><.ext>`; the answer is `{name, subfolder: '', type}`, the name a
// workflow's LoadImage `image` input accepts. A PNG beyond 16384 px per edge
// or 64 megapixels is a 400; a body beyond the upload limit a 413.

import { discardBlob, type StagedBlob, stageBlob } from '../assets/ingest.ts';
import type { ServiceContext } from '../context.ts';
import { invalid } from '../errors.ts';
import { cloudAccount } from './auth.ts';
import { checkSubfolder, fileType } from './file-params.ts';
import { contentTypeOf, imageSizeProblem, keepPrefix, pngSize } from './sniff.ts';
import { checkOverwrite, readUploadForm } from './upload-form.ts';
import { storeUpload } from './upload-store.ts';

interface Taken {
  staged: StagedBlob;
  prefix: Uint8Array;
}

export async function uploadImage(request: Request, ctx: ServiceContext): Promise<Response> {
  const account = await cloudAccount(request, ctx);
  const form = await readUploadForm<Taken>(request, ctx, {
    fields: ['type', 'overwrite', 'subfolder'],
    async take(part) {
      const kept = keepPrefix(part.body);
      const staged = await stageBlob(ctx, kept.body);
      return { staged, prefix: kept.prefix() };
    },
    drop: (t) => discardBlob(ctx, t.staged.writer),
  });
  const { staged, prefix } = form.file;
  try {
    const type = fileType(form.fields.type, 'type', 'input');
    checkOverwrite(form.fields.overwrite);
    checkSubfolder(form.fields.subfolder, 'subfolder');
    if (staged.size === 0) throw invalid('image: the file is empty', 'image', 'is empty');
    const size = pngSize(prefix);
    const problem = size && imageSizeProblem(size);
    if (problem) throw invalid(`image: ${problem}`, 'image', 'too large', { ...size });
    const contentType = contentTypeOf(prefix, form.contentType, form.filename);
    const result = await storeUpload(ctx, request, account, staged, { fileName: form.filename, contentType, type });
    return Response.json({ name: result.name, subfolder: '', type: result.type }, { headers: { 'Cache-Control': 'no-store' } });
  } catch (err) {
    // storeUpload settles the writer itself; aborting twice is harmless.
    await discardBlob(ctx, staged.writer);
    throw err;
  }
}
