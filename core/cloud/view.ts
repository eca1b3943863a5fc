// GET /view?filename=&subfolder=&type=: a 302 whose Location is the file's
// signed, short-lived content URL (GET /api/v2/assets/{id}/content?...),
// fetched without any auth header, as the cloud contract's client flow says.
// The name is looked up among the caller's own files only (another account's
// name is as unknown as a made-up one: 404). `type` must be output, input or
// temp but does not narrow the lookup (one flat namespace); `subfolder` is
// ignored. A traversal attempt in either is a 400. Not supported: `channel`
// (the reference re-encodes rgb/alpha) and `preview` (a re-encoded preview):
// both are ignored and the file is served as stored.

import { assetView } from '../assets/view.ts';
import type { ServiceContext } from '../context.ts';
import { notFound } from '../errors.ts';
import { cloudAccount } from './auth.ts';
import { findByFileName } from './file-names.ts';
import { checkFileName, checkSubfolder, fileType } from './file-params.ts';

export async function viewFile(request: Request, ctx: ServiceContext): Promise<Response> {
  const account = await cloudAccount(request, ctx);
  const query = new URL(request.url).searchParams;
  const filename = checkFileName(query.get('filename'), 'filename');
  checkSubfolder(query.get('subfolder'), 'subfolder');
  fileType(query.get('type'), 'type', 'output');
  const asset = await findByFileName(ctx, account.id, filename);
  if (!asset) throw notFound(`You have no file named "${filename}".`);
  const { url } = await assetView(ctx, request, asset);
  return new Response(null, { status: 302, headers: { Location: url, 'Cache-Control': 'no-store' } });
}
