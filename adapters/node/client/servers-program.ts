// The `graphrun servers` subcommands on the client's commander program: each
// takes --url (env GRAPHRUN_URL) and --operator-token (env
// GRAPHRUN_OPERATOR_TOKEN) instead of --token, and --deployment for a
// deployment of a server started with --deployments.
import type { Command } from 'commander';
import { DEFAULT_URL } from './config.ts';
import { serversAdd, serversDrain, serversList, serversRemove } from './servers-command.ts';

type Env = Record<string, string | undefined>;

const EXAMPLE = `
Examples:
  export GRAPHRUN_OPERATOR_TOKEN=...
  graphrun servers add http://gpu-3:8188
  graphrun servers list
  graphrun servers drain 6f0c...   # finishes what it runs, takes no new job
  graphrun servers remove 6f0c...  # leaves now; a job running there runs again elsewhere
  graphrun servers list --deployment sdxl   # the servers of deployment sdxl (serve --deployments)`;

export function withOperator(command: Command): Command {
  return command
    .option('--url <url>', `the server's base URL, mount prefix included (env GRAPHRUN_URL, default ${DEFAULT_URL})`)
    .option('--operator-token <secret>', "the service's operator token (env GRAPHRUN_OPERATOR_TOKEN; prefer the variable)")
    .option('--json', 'print the answer as JSON');
}

const withDeployment = (command: Command): Command =>
  withOperator(command).option(
    '--deployment <id>',
    'a deployment of a server started with --deployments: its servers (at /deployment/<id> under --url)',
  );

export function addServersCommands(program: Command, env: Env, exit: (code: number) => void): void {
  const servers = program.command('servers').description("The engine servers of the service's pool (operator token)").addHelpText('after', EXAMPLE);
  withDeployment(servers.command('list').description('List the registered servers (and configured ones) with their live state')).action(
    async (flags) => exit(await serversList(flags, env)),
  );
  withDeployment(servers.command('add').description("Register a server: it joins every runner's pool, also after a restart"))
    .argument('<url>', 'its http(s) base URL')
    .action(async (url: string, flags) => exit(await serversAdd(url, flags, env)));
  withDeployment(servers.command('drain').description('The server finishes what it runs and takes no new job'))
    .argument('<id>', 'the server id (graphrun servers list)')
    .action(async (id: string, flags) => exit(await serversDrain(id, flags, env)));
  withDeployment(servers.command('remove').description('The server leaves now; a job running there runs again elsewhere'))
    .argument('<id>', 'the server id')
    .action(async (id: string, flags) => exit(await serversRemove(id, flags, env)));
}
