// Which hosts an outbound request must not reach (SSRF): private, loopback,
// link-local, unspecified and multicast addresses, IPv6 forms that embed an
// IPv4 address, and names that can only mean a local host. The guard in
// url-guard.ts applies these to every URL and redirect hop, and to the
// addresses a name resolves to when the runtime can resolve names.

/** Dotted-quad IPv4 (the URL parser already canonicalises 0x7f.1, 2130706433, ...). */
function parseIPv4(host: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  const octets = m?.slice(1).map(Number);
  return octets?.every((o) => o <= 255) ? octets : null;
}

/** Eight 16-bit groups, accepting "::" and a trailing dotted IPv4. */
function parseIPv6(host: string): number[] | null {
  let text = host;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const o = parseIPv4(v4[1]);
    if (!o) return null;
    text = `${text.slice(0, -v4[1].length)}${((o[0] << 8) | o[1]).toString(16)}:${((o[2] << 8) | o[3]).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const parse = (s: string) => (s ? s.split(':').map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : NaN)) : []);
  const head = parse(halves[0]);
  const rest = halves.length === 2 ? parse(halves[1]) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const groups = [...head, ...new Array(halves.length === 2 ? missing : 0).fill(0), ...rest];
  return groups.every((g) => Number.isInteger(g)) ? groups : null;
}

function ipv4Reason([a, b]: number[]): string | null {
  if (a === 0) return 'an unspecified address (0.0.0.0/8)';
  if (a === 127) return 'a loopback address';
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return 'a private address';
  if (a === 100 && b >= 64 && b <= 127) return 'a shared (carrier-grade NAT) address';
  if (a === 169 && b === 254) return 'a link-local address';
  if (a >= 224) return 'a multicast or reserved address';
  return null;
}

function ipv6Reason(g: number[]): string | null {
  const v4 = (hi: number, lo: number) => ipv4Reason([hi >> 8, hi & 255, lo >> 8, lo & 255]);
  const zeros = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeros(8)) return 'an unspecified address (::)';
  if (zeros(7) && g[7] === 1) return 'a loopback address';
  if ((g[0] & 0xfe00) === 0xfc00) return 'a private (unique local) address';
  if ((g[0] & 0xffc0) === 0xfe80 || (g[0] & 0xffc0) === 0xfec0) return 'a link-local or site-local address';
  if ((g[0] & 0xff00) === 0xff00) return 'a multicast address';
  // Forms that carry an IPv4 address: mapped, compatible, translated, NAT64, 6to4, Teredo.
  if (zeros(5) && g[5] === 0xffff) return v4(g[6], g[7]);
  if (zeros(6)) return v4(g[6], g[7]);
  if (zeros(4) && g[4] === 0xffff && g[5] === 0) return v4(g[6], g[7]);
  if (g[0] === 0x64 && g[1] === 0xff9b) return g[2] === 1 ? 'a local-use NAT64 address' : v4(g[6], g[7]);
  if (g[0] === 0x2002) return v4(g[1], g[2]);
  if (g[0] === 0x2001 && g[1] === 0) return v4(~g[6] & 0xffff, ~g[7] & 0xffff);
  return null;
}

/** Why `hostname` (as URL.hostname gives it) must not be fetched, or null when it may be. */
export function forbiddenHostReason(hostname: string): string | null {
  const host = hostname.toLowerCase().replace(/\.+$/, '');
  if (host.startsWith('[')) {
    const groups = parseIPv6(host.slice(1, -1));
    return groups ? ipv6Reason(groups) : 'an unparseable IPv6 address';
  }
  const octets = parseIPv4(host);
  if (octets) return ipv4Reason(octets);
  if (host === 'localhost' || host.endsWith('.localhost')) return 'a loopback name';
  if (/\.(local|internal|home\.arpa)$/.test(host)) return 'a local-network name';
  // A name without a dot is completed by the resolver's search domains: the local network.
  if (!host.includes('.')) return 'a single-label (local-network) name';
  return null;
}

/** Why a resolved address (as a resolver returns it: IPv6 without brackets) must not be reached, or null. */
export function forbiddenAddressReason(address: string): string | null {
  const literal = address.includes(':') ? `[${address.replace(/%.*$/, '')}]` : address;
  if (!literal.startsWith('[') && !parseIPv4(literal)) return 'not an IP address';
  return forbiddenHostReason(literal);
}
