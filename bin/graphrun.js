#!/usr/bin/env node
// The `graphrun` executable: the CLI compiled into dist/ (`npm run build`,
// which `npm start` and `npm pack` run first), on plain node; the arguments
// pass through untouched.
import { existsSync } from 'node:fs';

const cli = new URL('../dist/adapters/node/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write('graphrun: the CLI is not built (no dist/): run `npm run build` first\n');
  process.exit(1);
}
const { main } = await import(cli.href);
await main(process.argv.slice(2));
