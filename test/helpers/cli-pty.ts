// The `graphrun` command in a pseudo-terminal (@lydell/node-pty), for the
// client commands' tests: it sees a TTY on stdin, stdout and stderr, so it
// draws its live progress bar; what it writes arrives as the terminal shows
// it (both streams together, escape codes included), and the test can type
// (Ctrl-C is "\x03"). Like helpers/cli.ts it runs the CLI's source through
// tsx; the GRAPHRUN_URL and GRAPHRUN_TOKEN of this process never leak in.
import { type IPty, spawn } from '@lydell/node-pty';
import { afterEach } from 'vitest';
import { CLI } from './cli.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

export interface PtyCli {
  pty: IPty;
  /** All it printed so far. */
  output(): string;
  /** The first match of `pattern` in what it printed; rejects when it exits first. */
  printed(pattern: RegExp): Promise<RegExpExecArray>;
  /** Its exit code, once the terminal has delivered all it printed. */
  exited: Promise<number>;
}

const running = new Set<IPty>();
afterEach(() => {
  for (const pty of running) pty.kill('SIGKILL');
  running.clear();
});

/** Strips terminal escape sequences, leaving the text a user reads. */
export const plainText = (s: string): string => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');

export function spawnPtyCli(args: string[], env: Record<string, string> = {}): PtyCli {
  const childEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== 'GRAPHRUN_URL' && k !== 'GRAPHRUN_TOKEN') childEnv[k] = v;
  Object.assign(childEnv, { TERM: 'xterm-256color' }, env);
  // cwd at the repository root: `--import tsx` resolves tsx from there.
  const pty = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], { name: 'xterm-256color', cols: 120, rows: 30, cwd: ROOT, env: childEnv });
  running.add(pty);
  let out = '';
  const watchers = new Set<() => void>();
  pty.onData((d) => {
    out += d;
    for (const w of watchers) w();
  });
  const exited = new Promise<number>((resolve) =>
    pty.onExit(({ exitCode }) => {
      running.delete(pty);
      resolve(exitCode);
    }),
  );
  const printed = (pattern: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const look = () => {
        const m = pattern.exec(out);
        if (m) {
          watchers.delete(look);
          resolve(m);
        }
      };
      watchers.add(look);
      look();
      void exited.then((code) => reject(new Error(`exited ${code} before printing ${pattern}: ${JSON.stringify(out)}`)));
    });
  return { pty, output: () => out, printed, exited };
}
