// `--webhook` / GRAPHRUN_WEBHOOKS for serve and runner: endpoints from the
// flags over the variable, events after a `#`, the secret from
// GRAPHRUN_WEBHOOK_SECRET only, and clear usage errors naming the flag or
// the variable.
import { describe, expect, it } from 'vitest';
import { CliUsageError, parseCliArgs, USAGE } from '../adapters/node/cli-options.ts';

const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const env = { GRAPHRUN_WEBHOOK_SECRET: secret };

const webhooksOf = (argv: string[], e: Record<string, string> = env) => {
  const parsed = parseCliArgs(argv, e);
  if (parsed.command === 'help') throw new Error('expected serve or runner');
  return parsed.options.webhooks;
};

describe('cli options: --webhook', () => {
  it('is off by default, also with the secret set', () => {
    expect(webhooksOf(['serve'], {})).toBeUndefined();
    expect(webhooksOf(['runner'])).toBeUndefined();
  });

  it('takes one or more flags, in order, each with the secret from the environment and its events after a #', () => {
    expect(
      webhooksOf(['serve', '--webhook', 'https://hooks.example.com/graphrun', '--webhook', 'http://10.0.0.5:9000/in?k=v#job.failed, job.canceled']),
    ).toEqual([
      { url: 'https://hooks.example.com/graphrun', secret },
      { url: 'http://10.0.0.5:9000/in?k=v', secret, events: ['job.failed', 'job.canceled'] },
    ]);
    expect(webhooksOf(['runner', '--webhook=https://hooks.example.com/#*'])).toEqual([{ url: 'https://hooks.example.com/', secret, events: ['*'] }]);
  });

  it('takes GRAPHRUN_WEBHOOKS comma-separated (a comma in an event list stays with its entry), and the flags over it', () => {
    const list = { ...env, GRAPHRUN_WEBHOOKS: 'https://a.example/h#job.succeeded,job.failed, https://b.example/h' };
    expect(webhooksOf(['serve'], list)).toEqual([
      { url: 'https://a.example/h', secret, events: ['job.succeeded', 'job.failed'] },
      { url: 'https://b.example/h', secret },
    ]);
    expect(webhooksOf(['runner'], list)).toHaveLength(2);
    expect(webhooksOf(['serve', '--webhook', 'https://c.example/h'], list)).toEqual([{ url: 'https://c.example/h', secret }]);
    expect(webhooksOf(['serve'], { ...env, GRAPHRUN_WEBHOOKS: '' })).toBeUndefined();
  });

  it.each([
    [['serve', '--webhook', 'https://h.example/x'], {}, /--webhook needs the signing secret in GRAPHRUN_WEBHOOK_SECRET/],
    [['serve'], { GRAPHRUN_WEBHOOKS: 'https://h.example/x' }, /GRAPHRUN_WEBHOOKS needs the signing secret in GRAPHRUN_WEBHOOK_SECRET/],
    [['serve', '--webhook', 'https://h.example/x'], { GRAPHRUN_WEBHOOK_SECRET: 'plain' }, /^GRAPHRUN_WEBHOOK_SECRET must be "whsec_" followed by/],
    [['serve', '--webhook', 'https://h.example/x'], { GRAPHRUN_WEBHOOK_SECRET: 'whsec_c2hvcnQ=' }, /^GRAPHRUN_WEBHOOK_SECRET decodes to 5 bytes/],
    [['serve', '--webhook', 'ftp://h.example/x'], env, /^--webhook must be an http\(s\) URL, got "ftp:\/\/h\.example\/x"\.$/],
    [['runner'], { ...env, GRAPHRUN_WEBHOOKS: 'https://ok.example/,bogus' }, /^GRAPHRUN_WEBHOOKS must be an http\(s\) URL, got "bogus"\.$/],
    [
      ['runner'],
      { ...env, GRAPHRUN_WEBHOOKS: 'https://ok.example/#job.failed,ftp://h.example/x' },
      /^GRAPHRUN_WEBHOOKS must be an http\(s\) URL, got "ftp:\/\/h\.example\/x"\.$/,
    ],
    [
      ['serve', '--webhook', 'https://h.example/x#job.done'],
      env,
      /^--webhook https:\/\/h\.example\/x: unknown event "job\.done"; known: job\.succeeded, job\.failed, job\.canceled/,
    ],
    [['serve', '--webhook', 'https://h.example/x#'], env, /^--webhook https:\/\/h\.example\/x must list events/],
    [['serve', '--webhook', 'https://h.example/x', '--webhook', 'https://h.example/x#job.failed'], env, /https:\/\/h\.example\/x is given twice/],
  ] as const)('rejects %j with %j', (argv, e, message) => {
    expect(() => parseCliArgs(argv, e)).toThrow(CliUsageError);
    expect(() => parseCliArgs(argv, e)).toThrow(message);
  });

  it('is in the usage, with its variables', () => {
    for (const name of ['--webhook', 'GRAPHRUN_WEBHOOKS', 'GRAPHRUN_WEBHOOK_SECRET', 'job.succeeded']) expect(USAGE).toContain(name);
  });
});
