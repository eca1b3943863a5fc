// The address rules moved to engine/local/net, where every outbound request
// of the service (not only this engine's nodes) finds them; this path stays
// for code that imports them from here.
export { forbiddenHostReason } from '../net/address-rules.ts';
