// Base64 both ways with the Web's btoa/atob (audio chunk events, video key
// frames).
export function toBase64(bytes: Uint8Array): string {
  // In slices: spreading a whole chunk into fromCharCode would overflow the call stack.
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** Throws on text that is not base64. */
export function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}
