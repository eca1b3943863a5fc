// `--webhook <url>` (repeatable) and GRAPHRUN_WEBHOOKS for `graphrun serve`
// and `graphrun runner`: the endpoints that receive job events. An entry may
// name its events after a `#` (a fragment is never sent, so it is free):
// `https://hooks.example.com/graphrun#job.failed,job.canceled`. The signing
// secret comes only from GRAPHRUN_WEBHOOK_SECRET, one for every endpoint the
// CLI configures: flags are visible to other users of the machine.
import { webhookEvents, webhookSecretProblem, webhookUrl } from '../../core/webhooks/settings.ts';
import type { WebhookEndpoint } from '../../index.ts';
import { CliUsageError } from './cli-errors.ts';

const SECRET_VAR = 'GRAPHRUN_WEBHOOK_SECRET';
const LIST_VAR = 'GRAPHRUN_WEBHOOKS';

/** The variable's entries, comma-separated; a piece without a scheme after an entry with a `#` is one more of its events. */
function splitList(raw: string): string[] {
  const entries: string[] = [];
  for (const piece of raw.split(',').map((p) => p.trim())) {
    const last = entries.length - 1;
    if (last >= 0 && entries[last].includes('#') && !/^[a-z][a-z0-9+.-]*:/i.test(piece)) entries[last] += `,${piece}`;
    else if (piece !== '') entries.push(piece);
  }
  return entries;
}

/** The endpoints from the flags, else from GRAPHRUN_WEBHOOKS; undefined when there are none. */
export function parseWebhookOptions(flags: string[] | undefined, env: Record<string, string | undefined>): WebhookEndpoint[] | undefined {
  const from = flags !== undefined ? '--webhook' : LIST_VAR;
  const entries = flags ?? splitList(env[LIST_VAR] ?? '');
  if (entries.length === 0) return undefined;
  const secret = env[SECRET_VAR];
  if (!secret)
    throw new CliUsageError(`${from} needs the signing secret in ${SECRET_VAR} ("whsec_" followed by the base64 of 24 to 64 random bytes).`);
  const problem = webhookSecretProblem(secret);
  if (problem) throw new CliUsageError(`${SECRET_VAR} ${problem}.`);
  const seen = new Set<string>();
  return entries.map((entry) => {
    const hash = entry.indexOf('#');
    const rawUrl = hash === -1 ? entry : entry.slice(0, hash);
    try {
      const url = webhookUrl(rawUrl, from);
      if (seen.has(url)) throw new TypeError(`${from}: ${url} is given twice; give it once with every event it wants after a #`);
      seen.add(url);
      if (hash === -1) return { url, secret };
      const events = entry
        .slice(hash + 1)
        .split(',')
        .map((e) => e.trim())
        .filter(Boolean);
      webhookEvents(events, `${from} ${url}`);
      return { url, secret, events: events as WebhookEndpoint['events'] };
    } catch (err) {
      throw new CliUsageError(`${err instanceof Error ? err.message : String(err)}.`);
    }
  });
}
