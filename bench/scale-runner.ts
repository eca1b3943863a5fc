// One job runner of bench/scale.ts, in a process of its own (forked with an
// IPC channel): `graphrun runner` as the CLI builds it (createService with
// its defaults: the built-in engine on a worker thread per core, 4 jobs at
// once, the default tier limits), plus the bench's accounts, so that its
// start keeps the API keys the API instance stored. Argument: the case's
// storage as JSON. Says `ready` once it runs jobs; on `stop`, or when the
// bench goes away, closes the service (jobs under way are queued again)
// and exits.
import { createService } from '../index.ts';
import { ACCOUNTS, errorLogger, type FromRunner, openScaleStorage, type ScaleStorage, type ToRunner } from './scale-setup.ts';

const send = (message: FromRunner) => {
  if (process.connected) process.send?.(message);
};

const config = JSON.parse(process.argv[2] ?? '') as ScaleStorage;
let stopping: Promise<void> | undefined;

try {
  const storage = await openScaleStorage(config);
  const service = await createService({ storage, accounts: ACCOUNTS, logger: errorLogger(`runner ${process.pid}`), sweepIntervalMs: 0 });
  const stop = () =>
    (stopping ??= service
      .close()
      .catch((err: unknown) => process.stderr.write(`runner ${process.pid}: close failed: ${String(err)}\n`))
      .then(() => {
        send({ type: 'stopped' });
        process.exit(0);
      }));
  process.on('message', (message: ToRunner) => {
    if (message.type === 'stop') void stop();
  });
  // The bench ended (or died) without a word: never outlive it.
  process.on('disconnect', () => void stop());
  send({ type: 'ready' });
} catch (err) {
  send({ type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  process.exit(1);
}
