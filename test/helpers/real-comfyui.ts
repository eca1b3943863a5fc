// The real engine server (ComfyUI, CPU, non-ML nodes) for integration tests:
// started through scripts/real-comfyui.sh (../shared/comfyui/run-comfyui.sh
// and what it lacks) on a free port, its files under a directory of its own,
// stopped with its whole process group. The first start on a fresh machine
// installs Debian packages: minutes.
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../scripts/real-comfyui.sh', import.meta.url));
/** A bound, not a wait: the first start installs python3-torch and friends. */
const START_TIMEOUT_MS = 20 * 60_000;

export interface RealComfyUI {
  url: string;
  /** Where it keeps its files: output/, input/, temp/. */
  base: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startRealComfyUI(): Promise<RealComfyUI> {
  const port = await freePort();
  const base = `/tmp/comfyui-data-graphrun-${port}`;
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile('bash', [SCRIPT, String(port)], { env: { ...process.env, COMFYUI_BASE: base }, timeout: START_TIMEOUT_MS }, (err, out, errOut) => {
      if (err) reject(new Error(`run-comfyui.sh ${port} failed: ${err.message}\n${errOut}`));
      else resolve(out);
    });
  });
  const pid = Number(stdout.trim().split('\n').at(-1));
  if (!Number.isInteger(pid)) throw new Error(`run-comfyui.sh printed no PID: ${stdout}`);
  return {
    url: `http://127.0.0.1:${port}`,
    base,
    async stop() {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
      // Gone when signal 0 fails: the port and the files are free again.
      for (;;) {
        try {
          process.kill(pid, 0);
        } catch {
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await rm(base, { recursive: true, force: true });
    },
  };
}
