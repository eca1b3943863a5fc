// The body POST /queue and POST /history share: `delete` (job ids) and/or
// `clear`, nothing else.
import * as v from 'valibot';

export const ManageBody = v.strictObject(
  {
    delete: v.optional(v.pipe(v.array(v.string('must be job ids'), 'must be an array of job ids'), v.maxLength(1000, 'at most 1000 ids'))),
    clear: v.optional(v.boolean('must be a boolean')),
  },
  'is not accepted; send delete and/or clear',
);
