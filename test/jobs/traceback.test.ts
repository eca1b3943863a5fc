// Tracebacks shown to clients keep their frames but not the server's
// directories: V8 stacks (paths and file: URLs), the reference engine's
// Python tracebacks (POSIX and Windows paths), as one string or the
// reference's list of lines; the rest of the text is left as it is.
import { describe, expect, it } from 'vitest';
import { tracebackLines } from '../../core/cloud/exception-fields.ts';
import { scrubPaths, scrubTraceback } from '../../core/jobs/traceback.ts';

describe('scrubPaths', () => {
  it('keeps the file name, line and column of each frame, not its directories', () => {
    const stack = [
      'TypeError: cannot do that',
      '    at Object.run (/home/deploy/graphrun/test/helpers/local-nodes.ts:79:15)',
      '    at async run (file:///srv/graphrun/dist/core/jobs/runner.js:203:7)',
      '    at /srv/graphrun/dist/index.js:1:2',
      '    at node:internal/process/task_queues:95:5',
    ].join('\n');
    expect(scrubPaths(stack)).toBe(
      [
        'TypeError: cannot do that',
        '    at Object.run (local-nodes.ts:79:15)',
        '    at async run (runner.js:203:7)',
        '    at index.js:1:2',
        '    at node:internal/process/task_queues:95:5',
      ].join('\n'),
    );
  });

  it("scrubs the reference engine's Python frames, POSIX and Windows", () => {
    expect(scrubPaths('  File "/opt/comfyui/execution.py", line 496, in execute\n    output_data = get_output_data(obj)\n')).toBe(
      '  File "execution.py", line 496, in execute\n    output_data = get_output_data(obj)\n',
    );
    expect(scrubPaths('  File "C:\\\\Users\\\\bob\\\\ComfyUI\\\\nodes.py", line 3, in f')).toBe('  File "nodes.py", line 3, in f');
  });

  it('leaves URLs, relative paths and plain text alone', () => {
    for (const text of ['see https://example.com/a/b/c', 'a/b/c and 1/2', 'ValueError: bad value 3/4', '']) expect(scrubPaths(text)).toBe(text);
  });
});

describe('scrubTraceback and tracebackLines', () => {
  it('scrub a string or a list of lines, and pass anything else through', () => {
    expect(scrubTraceback('at f (/a/b/c.ts:1:2)')).toBe('at f (c.ts:1:2)');
    expect(scrubTraceback(['  File "/x/y.py", line 1, in g\n', 7])).toEqual(['  File "y.py", line 1, in g\n', 7]);
    expect(scrubTraceback(null)).toBeNull();
  });

  it('the reference-shaped lines of a stored traceback have no server paths, whether stored as text or as lines', () => {
    expect(tracebackLines('E: x\n    at f (/srv/app/a.ts:1:2)')).toEqual(['E: x\n', '    at f (a.ts:1:2)\n']);
    expect(tracebackLines(['  File "/opt/c/execution.py", line 1, in run\n'])).toEqual(['  File "execution.py", line 1, in run\n']);
  });
});
