// The PostgreSQL channel of an event bus channel. Namespaced by the
// storage's schema, so deployments side by side in one database never hear
// each other. PostgreSQL takes at most 63 bytes for a channel name: a short
// plain-ASCII name is kept readable (pg_listening_channels() shows it), any
// other is hashed, with a prefix the readable form never has, so two
// channels never share a name.
import { createHash } from 'node:crypto';

const IDENT_SAFE = /^[A-Za-z0-9_]*$/;
const PLAIN = /^[\x20-\x7e]*$/;

export function pgChannelName(schema: string | null, channel: string): string {
  const ns = schema ?? '';
  const plain = `graphrun:${ns}:${channel}`;
  if (IDENT_SAFE.test(ns) && PLAIN.test(channel) && plain.length <= 63) return plain;
  return `graphrun#${createHash('sha256').update(`${ns}\0${channel}`).digest('base64url')}`;
}
