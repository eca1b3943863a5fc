#!/usr/bin/env node
// The `graphrun` executable: the CLI is TypeScript, so tsx is registered
// first to load it; the arguments pass through untouched.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../adapters/node/cli.ts');
await main(process.argv.slice(2));
