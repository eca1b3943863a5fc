// UUID syntax. Ids the service hands out are lowercase; ids read back (in a
// path, an asset reference, a workflow input) are taken in either case and
// looked up lowercased, while an id a client chooses must already be lowercase.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LOWERCASE_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A UUID in its 8-4-4-4-12 hex form, either case. */
export const isUuid = (value: string): boolean => UUID.test(value);

/** A UUID in its 8-4-4-4-12 hex form, lowercase only. */
export const isLowercaseUuid = (value: string): boolean => LOWERCASE_UUID.test(value);
