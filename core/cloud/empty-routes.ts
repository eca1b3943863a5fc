// Routes of the reference engine with nothing behind them here, answered as
// the reference answers them so its clients carry on: POST /free (unload
// models, free memory: the engine keeps no models to unload) is 200 with an
// empty body; GET /extensions (the frontend's extension scripts) and GET
// /embeddings (embedding model names) are empty lists. None has anything of
// an account's, so only /free, which changes things on the reference, asks
// for a key.
import * as v from 'valibot';
import type { ServiceContext } from '../context.ts';
import { validate } from '../schemas.ts';
import { cloudAccount } from './auth.ts';
import { readObject } from './read-object.ts';

// The reference reads these two as flags (any truthy value); other keys are ignored there too.
export const FreeBody = v.object({ unload_models: v.optional(v.unknown()), free_memory: v.optional(v.unknown()) });

export async function postFree(request: Request, ctx: ServiceContext): Promise<Response> {
  await cloudAccount(request, ctx);
  validate(FreeBody, await readObject(request));
  return new Response(null, { status: 200 });
}

export async function getExtensions(_request: Request, _ctx: ServiceContext): Promise<Response> {
  return Response.json([]);
}

export async function getEmbeddings(_request: Request, _ctx: ServiceContext): Promise<Response> {
  return Response.json([]);
}
