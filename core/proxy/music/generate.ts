// POST /proxy/musicgen/t2m/generate: the caller (401), the form (400, 422),
// the account's concurrent generations (429), its credits (402), then the
// provider's first event before any byte is sent (a failure there is a 502,
// or a 429 when the generator says so), then the NDJSON stream.

import { MusicProviderError } from '../../../providers/music.ts';
import { musicCredits } from '../../../providers/music-limits.ts';
import type { ServiceContext } from '../../context.ts';
import { requestOptions } from '../../http/request-options.ts';
import { chargeCredits, proxyAccount } from '../auth.ts';
import { GENERIC_UPSTREAM, MusicError } from './errors.ts';
import { readMusicForm } from './form.ts';
import { ndjsonBody } from './ndjson.ts';

/** Seconds a client is told to wait when its account is at the concurrency limit. */
const RETRY_AFTER = 5;

/** Said to a client of an adapter that can only return whole responses. */
const STREAM_ONLY =
  'Music generation streams its audio, and this deployment can only return whole responses (a buffered AWS Lambda handler); ' +
  'it needs a streaming one (createLambdaStreamHandler, exported as streamHandler). Nothing was charged.';

export async function generateMusic(request: Request, ctx: ServiceContext): Promise<Response> {
  // Credits are charged before the first byte, and a minute of audio is more than a whole response can carry.
  if (requestOptions(request)?.buffered) throw new MusicError('bad_request', STREAM_ONLY);
  let release: (() => void) | null = null;
  const abort = new AbortController();
  let iterator: AsyncIterator<unknown> | undefined;
  const onGone = () => abort.abort();
  try {
    const account = await proxyAccount(request, ctx);
    const form = await readMusicForm(request);
    release = ctx.musicSlots.acquire(account.id);
    if (!release) {
      throw new MusicError('rate_limited', 'This account already runs as many music generations as it may at once; wait for one to end.', {
        'Retry-After': String(RETRY_AFTER),
      });
    }
    const credits = musicCredits(form.duration);
    await chargeCredits(ctx, account.id, credits, 'music generation');

    // A client gone before the stream starts stops the generator too.
    request.signal.addEventListener('abort', onGone, { once: true });
    iterator = ctx.providers.music.generate(form, abort.signal)[Symbol.asyncIterator]();
    const first = await iterator.next().catch((err: unknown) => {
      throw providerFailure(err, ctx);
    });
    if (first.done) throw providerFailure(new Error('the provider ended without an event'), ctx);
    const held = release;
    release = null;
    const body = ndjsonBody(first.value, iterator, {
      abort,
      logger: ctx.logger,
      done: () => {
        request.signal.removeEventListener('abort', onGone);
        held();
      },
    });
    return new Response(body, {
      status: 200,
      headers: { 'Content-Type': 'application/x-ndjson', 'Cache-Control': 'no-store', 'X-Credits-Charged': String(credits) },
    });
  } catch (err) {
    request.signal.removeEventListener('abort', onGone);
    abort.abort();
    await iterator?.return?.().catch(() => undefined);
    throw err;
  } finally {
    release?.();
  }
}

/** Before the first byte: the documented body with a generic message; the detail goes to the log. */
function providerFailure(err: unknown, ctx: ServiceContext): MusicError {
  ctx.logger.error('music provider failed before the stream began', { error: err instanceof Error ? err.message : String(err) });
  if (err instanceof MusicProviderError && err.kind === 'rate_limited') {
    return new MusicError('rate_limited', 'The music generator is busy; try again shortly.', {
      'Retry-After': String(err.retryAfter ?? RETRY_AFTER),
    });
  }
  return new MusicError('upstream_error', GENERIC_UPSTREAM);
}
