// `graphrun upload FILE`: uploads one file as an asset and prints its id (for
// `--input`-less workflows that reference it, or scripts), or with --json
// the whole Asset the server answered.
import { stat } from 'node:fs/promises';
import { createApi } from './api.ts';
import { type ConnectionFlags, clientConfig } from './config.ts';
import { CliUsageError, EXIT_OK } from './errors.ts';
import { uploadFile } from './upload.ts';

export interface UploadFlags extends ConnectionFlags {
  contentType?: string;
  json?: boolean;
}

export async function uploadCommand(file: string, flags: UploadFlags, env: Record<string, string | undefined>): Promise<number> {
  const api = createApi(clientConfig(flags, env));
  const info = await stat(file).catch((err: Error) => {
    throw new CliUsageError(`cannot read ${file}: ${err.message}`);
  });
  if (!info.isFile()) throw new CliUsageError(`${file} is not a file.`);
  const asset = await uploadFile(api, file, { contentType: flags.contentType });
  process.stdout.write(flags.json ? `${JSON.stringify(asset, null, 2)}\n` : `${asset.id}\n`);
  return EXIT_OK;
}
