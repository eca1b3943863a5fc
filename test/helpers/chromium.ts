// Debian's chromium for the browser tests: its path, installed first with
// apt-get when it is missing and this process may (root, apt-get present),
// so `npm test` works on a fresh machine; otherwise a clear failure saying
// what to install. CHROMIUM_PATH names another build.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

const DEBIAN_CHROMIUM = '/usr/bin/chromium';

/** Flags for a headless run on a machine with no network but loopback: nothing starts that would call out. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

function hasAptGet(): boolean {
  try {
    execFileSync('apt-get', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function aptInstall(): void {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], { stdio: 'inherit', env });
  } catch {
    // The package lists may be missing or stale (a fresh container): read them, then try again.
    execFileSync('apt-get', ['update'], { stdio: 'inherit', env });
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], { stdio: 'inherit', env });
  }
}

/** The chromium executable, installing Debian's package when it is missing and that is possible. */
export function chromiumPath(): string {
  const wanted = process.env.CHROMIUM_PATH;
  if (wanted) {
    if (!existsSync(wanted)) throw new Error(`CHROMIUM_PATH is ${wanted}, which does not exist.`);
    return wanted;
  }
  if (existsSync(DEBIAN_CHROMIUM)) return DEBIAN_CHROMIUM;
  const root = process.getuid?.() === 0;
  const apt = root && hasAptGet();
  let failed = '';
  if (apt) {
    try {
      aptInstall();
    } catch (err) {
      failed = (err as Error).message;
    }
    if (existsSync(DEBIAN_CHROMIUM)) return DEBIAN_CHROMIUM;
  }
  const why = apt
    ? failed
      ? `Installing it with apt-get failed: ${failed}`
      : `apt-get installed the chromium package, but ${DEBIAN_CHROMIUM} is still missing.`
    : root
      ? 'apt-get is not available to install it.'
      : 'It is installed automatically only when the tests run as root on a system with apt-get.';
  throw new Error(
    `The browser tests need Chromium at ${DEBIAN_CHROMIUM}: install Debian's package (\`apt-get install chromium\`) ` +
      `or set CHROMIUM_PATH to a Chromium executable. ${why}`,
  );
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS });
}
