// The `graphrun deployments` subcommands on the client's commander program:
// list (the default), stop and start; each takes --url and --operator-token
// as `graphrun servers` does.
import type { Command } from 'commander';
import { deploymentsList, deploymentsMove } from './deployments-command.ts';
import { withOperator } from './servers-program.ts';

type Env = Record<string, string | undefined>;

const EXAMPLE = `
Examples:
  export GRAPHRUN_OPERATOR_TOKEN=...
  graphrun deployments              # every deployment of a server started with --deployments
  graphrun deployments stop sdxl    # its API answers 422 deployment_stopped, it starts no job
  graphrun deployments start sdxl

A stop is stored: the deployment stays stopped across restarts, on every
instance, until it is started again. Running jobs finish; queued ones wait.`;

export function addDeploymentsCommands(program: Command, env: Env, exit: (code: number) => void): void {
  const deployments = program
    .command('deployments')
    .description("The service's deployments and their condition; stop or start one (operator token)")
    .addHelpText('after', EXAMPLE);
  withOperator(deployments.command('list', { isDefault: true }).description('List the deployments: state, engine, why not ready')).action(
    async (flags) => exit(await deploymentsList(flags, env)),
  );
  for (const move of ['stop', 'start'] as const) {
    const what = move === 'stop' ? 'Stop a deployment: its API refuses requests and it starts no job' : 'Start a stopped deployment again';
    withOperator(deployments.command(move).description(what))
      .argument('<id>', "the deployment's id ('default': the one the flags configure)")
      .action(async (id: string, flags) => exit(await deploymentsMove(move, id, flags, env)));
  }
}
