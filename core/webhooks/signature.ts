// The Standard Webhooks headers of one attempt (https://www.standardwebhooks.com):
// `webhook-id` (the event's id, the same on every retry, for the receiver's
// dedup), `webhook-timestamp` (this attempt's time, seconds) and, with a
// secret, `webhook-signature` (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">`),
// signed by the specification's own library (pure JavaScript, no runtime module).
import { Webhook } from 'standardwebhooks';

/** One signer per secret: the key is decoded once. */
const signers = new Map<string, Webhook>();

function signer(secret: string): Webhook {
  let s = signers.get(secret);
  if (!s) signers.set(secret, (s = new Webhook(secret)));
  return s;
}

export function webhookHeaders(message: { id: string; timestampSeconds: number; body: string; secret?: string }): Record<string, string> {
  const headers: Record<string, string> = { 'webhook-id': message.id, 'webhook-timestamp': String(message.timestampSeconds) };
  if (message.secret !== undefined) {
    headers['webhook-signature'] = signer(message.secret).sign(message.id, new Date(message.timestampSeconds * 1000), message.body);
  }
  return headers;
}
