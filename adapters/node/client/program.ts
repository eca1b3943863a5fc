// The client commands of `graphrun` (run, jobs, cancel, upload; servers and
// deployments, the operator's), which talk to a running server over its API, parsed with commander. runClient returns
// the exit code: 0 done, 1 a failed job or a server's refusal, 2 a usage
// mistake (commander's own, or one found while reading the arguments'
// files), 130 interrupted.
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { cancelCommand } from './cancel-command.ts';
import { DEFAULT_URL } from './config.ts';
import { addDeploymentsCommands } from './deployments-program.ts';
import { ApiError, ClientError, CliUsageError, detailLines, EXIT_FAILED, EXIT_OK, EXIT_USAGE } from './errors.ts';
import { jobsCommand } from './jobs-command.ts';
import { runCommand } from './run-command.ts';
import { addServersCommands } from './servers-program.ts';
import { JOB_STATUSES } from './types.ts';
import { uploadCommand } from './upload-command.ts';

export const CLIENT_COMMANDS: readonly string[] = ['run', 'jobs', 'cancel', 'upload', 'servers', 'deployments'];

/** Whether `graphrun <argv>` is a client command (the first word names one); serve and runner parse the rest. */
export const isClientCommand = (argv: readonly string[]): boolean => CLIENT_COMMANDS.includes(argv[0] ?? '');

type Env = Record<string, string | undefined>;

const RUN_EXAMPLE = `
Examples:
  graphrun run workflow.json --input 10.image=photo.png --out results/
  graphrun run prompt.json --url http://gpu-box:8189 --json > result.json

--input points a node input at a local file: the file is uploaded as an asset
and the input set to the asset's typed reference. The workflow may be bare
(API format) or wrapped as {"prompt": {...}}. Ctrl-C cancels the job.`;

function withConnection(command: Command): Command {
  return command
    .option('--url <url>', `the server's base URL, mount prefix included (env GRAPHRUN_URL, default ${DEFAULT_URL})`)
    .option('--token <secret>', 'sent as "Authorization: Bearer <secret>" (env GRAPHRUN_TOKEN; prefer the variable)');
}

// No default array: commander would show it in the help as "(default: [])".
const collect = (value: string, previous: string[] = []) => [...previous, value];

function statuses(value: string, previous: string[] = []): string[] {
  const wanted = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const wrong = wanted.find((s) => !(JOB_STATUSES as readonly string[]).includes(s));
  if (wrong !== undefined || wanted.length === 0) throw new InvalidArgumentError(`A status is one of ${JOB_STATUSES.join(', ')}.`);
  return [...previous, ...wanted];
}

function limit(value: string): number {
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(n >= 1 && n <= 1000)) throw new InvalidArgumentError('Expected a whole number from 1 to 1000.');
  return n;
}

function buildProgram(env: Env, exit: (code: number) => void): Command {
  // Settings first: each subcommand copies them when it is added.
  const program = new Command('graphrun').exitOverride().showHelpAfterError();
  withConnection(program.command('run').description('Run a workflow file on the server, show its progress and download its outputs'))
    .argument('<workflow>', 'API-format workflow JSON file ("-" reads stdin)')
    .option('-i, --input <NODE.INPUT=path>', 'upload a file and set that node input to it (repeatable)', collect)
    .option('-o, --out <dir>', 'directory the outputs are saved into', '.')
    .option('--json', 'print the finished job and the saved files as JSON')
    .addHelpText('after', RUN_EXAMPLE)
    .action(async (file: string, flags) => exit(await runCommand(file, flags, env)));
  withConnection(program.command('jobs').description('List your jobs, newest first'))
    .option('--status <status>', `only jobs in these states, comma-separated or repeated (${JOB_STATUSES.join(', ')})`, statuses)
    .option('--limit <n>', 'at most this many jobs (1 to 1000)', limit, 20)
    .option('--json', 'print the jobs as JSON')
    .action(async (flags) => exit(await jobsCommand(flags, env)));
  withConnection(program.command('cancel').description('Cancel a job'))
    .argument('<id>', 'the job id')
    .option('--json', 'print the job as JSON')
    .action(async (id: string, flags) => exit(await cancelCommand(id, flags, env)));
  withConnection(program.command('upload').description('Upload a file as an asset and print its id'))
    .argument('<file>', 'the file to upload')
    .option('--content-type <type>', 'its media type (default: guessed from the extension)')
    .option('--json', 'print the whole asset as JSON')
    .action(async (file: string, flags) => exit(await uploadCommand(file, flags, env)));
  addServersCommands(program, env, exit);
  addDeploymentsCommands(program, env, exit);
  return program;
}

function report(err: unknown, command: string): number {
  // Commander has printed its message (and the usage) already.
  if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
  if (err instanceof CliUsageError) {
    process.stderr.write(`graphrun ${command}: ${err.message}\nRun "graphrun ${command} --help" for usage.\n`);
    return EXIT_USAGE;
  }
  if (err instanceof ClientError) {
    const details = err instanceof ApiError ? detailLines(err) : [];
    process.stderr.write(`graphrun: ${err.message}\n${details.map((l) => `${l}\n`).join('')}`);
    return err.exitCode;
  }
  process.stderr.write(`graphrun: ${err instanceof Error ? err.message : String(err)}\n`);
  return EXIT_FAILED;
}

/** Runs `graphrun <argv>` for a client command; resolves to the exit code. */
export async function runClient(argv: readonly string[], env: Env = process.env): Promise<number> {
  let code = EXIT_OK;
  const program = buildProgram(env, (c) => (code = c));
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (err) {
    return report(err, argv[0] ?? '');
  }
}
