// The parameters every file route of the cloud surface shares: a file `type`
// (input | temp | output: tags in a flat namespace, not directories), file
// names and subfolders checked for traversal the way the reference refuses
// them (here a 400, though nothing is ever looked up on a filesystem), and
// the reference's annotated form `name.png [input]`.
import { invalid } from '../errors.ts';

export const FILE_TYPES = ['input', 'temp', 'output'] as const;
export type FileType = (typeof FILE_TYPES)[number];

/** One of input | temp | output; absent or empty means `fallback`; anything else is a 400 naming the field. */
export function fileType(raw: string | null | undefined, field: string, fallback: FileType): FileType {
  if (raw === null || raw === undefined || raw === '') return fallback;
  if (!(FILE_TYPES as readonly string[]).includes(raw)) {
    throw invalid(`${field}: "${raw.slice(0, 40)}" is not one of ${FILE_TYPES.join(', ')}`, field, 'not allowed', {
      allowed: [...FILE_TYPES],
    });
  }
  return raw as FileType;
}

/** Why a name or subfolder would leave its folder, or null when it would not. */
function traversal(value: string): string | null {
  if (value.includes('\0')) return 'contains a NUL character';
  if (value.includes('\\')) return 'contains a backslash';
  if (value.startsWith('/')) return 'starts with "/"';
  // As the reference: any "..", not only a whole path segment.
  if (value.includes('..')) return 'contains ".."';
  return null;
}

/** A file name: required, at most 1024 characters, no traversal. */
export function checkFileName(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw invalid(`${field}: is required`, field, 'is required');
  if (value.length > 1024) throw invalid(`${field}: longer than 1024 characters`, field, 'too long');
  const why = traversal(value);
  if (why) throw invalid(`${field}: ${why}; file names are flat and may not leave their folder`, field, 'path traversal');
  return value;
}

/** A subfolder: accepted and ignored (the namespace is flat), but it may not try to leave its base either. */
export function checkSubfolder(value: unknown, field: string): void {
  if (value === null || value === undefined || value === '') return;
  if (typeof value !== 'string') throw invalid(`${field}: must be a string`, field, 'wrong type');
  const why = traversal(value);
  if (why) throw invalid(`${field}: ${why}`, field, 'path traversal');
}

/** `name.png [output]` -> `name.png`, as the reference reads annotated names. */
export const stripAnnotation = (name: string) => name.replace(/\s*\[(input|output|temp)\]$/, '').trim();
