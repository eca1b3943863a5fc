// HTTP Range header (RFC 9110 §14): one byte range per request. Several ranges
// are answered with the whole content, which the RFC allows.
import type { ByteRange } from '../../storage/types.ts';

export type RangeResult = { kind: 'full' } | { kind: 'partial'; range: ByteRange } | { kind: 'unsatisfiable' };

export function parseRange(header: string | null, size: number): RangeResult {
  if (header === null) return { kind: 'full' };
  const m = /^\s*([A-Za-z]+)\s*=\s*(.*)$/.exec(header);
  if (!m) return { kind: 'unsatisfiable' };
  // An unknown range unit must be ignored.
  if (m[1].toLowerCase() !== 'bytes') return { kind: 'full' };
  const specs = m[2].split(',').map((s) => s.trim());
  if (specs.length !== 1) {
    return specs.every((s) => /^(\d+-\d*|-\d+)$/.test(s)) ? { kind: 'full' } : { kind: 'unsatisfiable' };
  }
  const spec = /^(\d*)-(\d*)$/.exec(specs[0]);
  if (!spec || (spec[1] === '' && spec[2] === '')) return { kind: 'unsatisfiable' };
  if (spec[1] === '') {
    const suffix = Number(spec[2]);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', range: { start: Math.max(0, size - suffix), end: size - 1 } };
  }
  const start = Number(spec[1]);
  const end = spec[2] === '' ? size - 1 : Math.min(Number(spec[2]), size - 1);
  if (start >= size || (spec[2] !== '' && Number(spec[2]) < start)) return { kind: 'unsatisfiable' };
  return { kind: 'partial', range: { start, end } };
}
