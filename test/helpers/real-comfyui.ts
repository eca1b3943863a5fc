// The real engine server (ComfyUI, CPU, non-ML nodes) for integration tests:
// started through scripts/real-comfyui.sh (../shared/comfyui/run-comfyui.sh
// and what it lacks) on a free port, its files under a directory of its own,
// stopped with its whole process group. It can also be killed as a crash
// would (its files stay) and started again on the same port and directory.
// The first start on a fresh machine installs Debian packages: minutes.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { freePort } from './free-port.ts';

const SCRIPT = fileURLToPath(new URL('../../scripts/real-comfyui.sh', import.meta.url));
/** A bound, not a wait: the first start installs python3-torch and friends. */
const START_TIMEOUT_MS = 20 * 60_000;

export interface RealComfyUI {
  url: string;
  /** Where it keeps its files: output/, input/, temp/. */
  base: string;
  /** SIGKILLs its whole process group, as a crash would; resolves once it is gone. Its files stay. */
  kill(): Promise<void>;
  /** Starts it again (after kill) on the same port and directory: a restarted server, which forgot its queue and history. */
  restart(): Promise<void>;
  /** Kills it and removes its files. */
  stop(): Promise<void>;
}

/** Runs the start script; resolves to the server's PID once it answers. */
function launch(port: number, base: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    execFile('bash', [SCRIPT, String(port)], { env: { ...process.env, COMFYUI_BASE: base }, timeout: START_TIMEOUT_MS }, (err, out, errOut) => {
      if (err) return reject(new Error(`run-comfyui.sh ${port} failed: ${err.message}\n${errOut}`));
      const pid = Number(out.trim().split('\n').at(-1));
      if (!Number.isInteger(pid)) reject(new Error(`run-comfyui.sh printed no PID: ${out}`));
      else resolve(pid);
    });
  });
}

/** Gone when signal 0 fails, or left a zombie until init reaps it: either way its port and files are free. */
function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    // The state follows the parenthesised command name in /proc/PID/stat.
    return / Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\)/s, ''));
  } catch {
    return true;
  }
}

async function killGroup(pid: number): Promise<void> {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
  while (!gone(pid)) await new Promise((resolve) => setTimeout(resolve, 50));
}

export async function startRealComfyUI(): Promise<RealComfyUI> {
  const port = await freePort();
  const base = `/tmp/comfyui-data-graphrun-${port}`;
  let pid: number | null = await launch(port, base);
  return {
    url: `http://127.0.0.1:${port}`,
    base,
    async kill() {
      if (pid !== null) await killGroup(pid);
      pid = null;
    },
    async restart() {
      if (pid !== null) throw new Error('restart: the server still runs; kill it first');
      pid = await launch(port, base);
    },
    async stop() {
      if (pid !== null) await killGroup(pid);
      pid = null;
      await rm(base, { recursive: true, force: true });
    },
  };
}
