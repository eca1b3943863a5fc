// Shows a job's progress on stderr while `graphrun run` waits for it: a live
// bar (cli-progress) when stderr is a terminal, otherwise one plain line per
// change, with no escape codes, for logs and pipes. Notes (uploads, the
// submitted job, reconnects) print above the bar or as lines of their own.
import { MultiBar, Presets, type SingleBar } from 'cli-progress';
import { percentOf, stageText } from './progress-text.ts';
import type { JobState } from './types.ts';

export interface ProgressView {
  update(state: Partial<JobState>): void;
  note(text: string): void;
  /** Shows the last state and ends the display; idempotent. */
  stop(): void;
}

type Stream = NodeJS.WritableStream & { isTTY?: boolean };

export function createProgressView(stream: Stream = process.stderr): ProgressView {
  return stream.isTTY ? barView(stream) : lineView(stream);
}

const INITIAL: JobState = { status: 'queued', queue_position: null, progress: null };

function lineView(stream: Stream): ProgressView {
  let state = INITIAL;
  let last = '';
  let stopped = false;
  return {
    update(change) {
      state = { ...state, ...change };
      const line = `[${String(percentOf(state)).padStart(3)}%] ${stageText(state)}`;
      if (stopped || line === last) return;
      last = line;
      stream.write(`${line}\n`);
    },
    note: (text) => void stream.write(`${text}\n`),
    stop: () => void (stopped = true),
  };
}

function barView(stream: Stream): ProgressView {
  let state = INITIAL;
  // A MultiBar of one: it can print notes above the bar while the bar lives.
  let multi: MultiBar | null = null;
  let bar: SingleBar | null = null;
  let stopped = false;
  const payload = () => ({ stage: stageText(state) });
  return {
    update(change) {
      state = { ...state, ...change };
      if (stopped) return;
      if (!multi) {
        multi = new MultiBar(
          { stream, format: '{bar} {percentage}% | {stage}', barsize: 30, hideCursor: true, gracefulExit: false, autopadding: true },
          Presets.shades_classic,
        );
        bar = multi.create(100, percentOf(state), payload());
      }
      bar!.update(percentOf(state), payload());
    },
    note(text) {
      if (multi && !stopped) multi.log(`${text}\n`);
      else stream.write(`${text}\n`);
    },
    stop() {
      if (stopped) return;
      stopped = true;
      // update() prints notes still waiting for the next redraw; stop() draws the bar once more, restores the cursor and ends the line.
      multi?.update();
      multi?.stop();
    },
  };
}
