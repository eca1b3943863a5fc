// `graphrun` option parsing: flags over GRAPHRUN_* variables over defaults,
// and clear usage errors for everything else.
import { describe, expect, it } from 'vitest';
import { CliUsageError, DEFAULT_DATA, DEFAULT_HOST, DEFAULT_PORT, parseCliArgs, USAGE } from '../adapters/node/cli-options.ts';

const serveOptions = (argv: string[], env: Record<string, string> = {}) => {
  const parsed = parseCliArgs(argv, env);
  if (parsed.command !== 'serve') throw new Error('expected serve');
  return parsed.options;
};

describe('cli options', () => {
  it('uses the defaults when nothing is given', () => {
    expect(serveOptions(['serve'])).toEqual({
      host: DEFAULT_HOST,
      port: DEFAULT_PORT,
      data: DEFAULT_DATA,
      token: undefined,
      runJobs: true,
      database: undefined,
      blobs: undefined,
      allowPrivateUrls: false,
      workers: [],
      threads: undefined,
      jobLeaseSeconds: undefined,
      musicUpstream: undefined,
      videoUpstream: undefined,
      pool: {},
    });
    expect([DEFAULT_HOST, DEFAULT_PORT, DEFAULT_DATA]).toEqual(['127.0.0.1', 8189, './data']);
  });

  it('takes GRAPHRUN_* variables, and flags over them', () => {
    const env = { GRAPHRUN_HOST: '0.0.0.0', GRAPHRUN_PORT: '9000', GRAPHRUN_DATA: '/var/lib/graphrun', GRAPHRUN_TOKEN: 'from-env' };
    expect(serveOptions(['serve'], env)).toEqual({
      host: '0.0.0.0',
      port: 9000,
      data: '/var/lib/graphrun',
      token: 'from-env',
      runJobs: true,
      allowPrivateUrls: false,
      workers: [],
      musicUpstream: undefined,
      videoUpstream: undefined,
      pool: {},
    });
    expect(serveOptions(['serve', '--host', '::1', '--port=0', '--data', './d', '--token', 'flag'], env)).toEqual({
      host: '::1',
      port: 0,
      data: './d',
      token: 'flag',
      runJobs: true,
      allowPrivateUrls: false,
      workers: [],
      musicUpstream: undefined,
      videoUpstream: undefined,
      pool: {},
    });
    expect(serveOptions(['serve', '--port', '1234'], env)).toMatchObject({ host: '0.0.0.0', port: 1234, token: 'from-env' });
  });

  it('treats an empty variable as unset', () => {
    expect(serveOptions(['serve'], { GRAPHRUN_PORT: '', GRAPHRUN_TOKEN: '' })).toMatchObject({ port: DEFAULT_PORT, token: undefined });
  });

  it('answers --help and -h with the usage, whatever else is there', () => {
    expect(parseCliArgs(['--help'])).toEqual({ command: 'help' });
    expect(parseCliArgs(['serve', '-h'])).toEqual({ command: 'help' });
    expect(USAGE).toMatch(/graphrun serve/);
    for (const name of [
      '--host',
      '--port',
      '--data',
      '--token',
      'GRAPHRUN_TOKEN',
      '--allow-private-urls',
      'GRAPHRUN_ALLOW_PRIVATE_URLS',
      '--worker',
      'GRAPHRUN_WORKERS',
    ]) {
      expect(USAGE).toContain(name);
    }
  });

  it.each([
    [['serve', '--bogus'], /Unknown option '--bogus'/],
    [['serve', '--port'], /--port/],
    [['serve', '--port', 'eighty'], /--port must be a port number/],
    [['serve', '--port', '70000'], /--port must be a port number/],
    [['serve', '--port', '-1'], /port/],
    [['serve', '--host', ''], /--host must not be empty/],
    [['serve', 'extra'], /Unexpected argument "extra"/],
    [['serve', '--allow-private-urls=yes'], /allow-private-urls/],
    [['start'], /Unknown command "start"/],
    [[], /No command given/],
  ])('rejects %j', (argv, message) => {
    expect(() => parseCliArgs(argv)).toThrow(CliUsageError);
    expect(() => parseCliArgs(argv)).toThrow(message);
  });

  it('names the variable when the bad port came from the environment', () => {
    expect(() => parseCliArgs(['serve'], { GRAPHRUN_PORT: 'x' })).toThrow(/GRAPHRUN_PORT must be a port number/);
  });

  describe('--allow-private-urls / GRAPHRUN_ALLOW_PRIVATE_URLS', () => {
    it('is off by default and on with the flag', () => {
      expect(serveOptions(['serve']).allowPrivateUrls).toBe(false);
      expect(serveOptions(['serve', '--allow-private-urls']).allowPrivateUrls).toBe(true);
      expect(serveOptions(['--allow-private-urls', 'serve', '--port', '0'])).toMatchObject({ allowPrivateUrls: true, port: 0 });
    });

    it.each(['1', 'true', 'TRUE', 'True'])('is on with the variable set to %j', (value) => {
      expect(serveOptions(['serve'], { GRAPHRUN_ALLOW_PRIVATE_URLS: value }).allowPrivateUrls).toBe(true);
    });

    it.each(['0', 'false', 'FALSE', ''])('is off with the variable set to %j', (value) => {
      expect(serveOptions(['serve'], { GRAPHRUN_ALLOW_PRIVATE_URLS: value }).allowPrivateUrls).toBe(false);
    });

    it('the flag turns it on whatever the variable says', () => {
      expect(serveOptions(['serve', '--allow-private-urls'], { GRAPHRUN_ALLOW_PRIVATE_URLS: '0' }).allowPrivateUrls).toBe(true);
    });

    it.each(['yes', 'on', '2', 'tru', '1 '])('rejects the variable set to %j, naming it', (value) => {
      const parse = () => parseCliArgs(['serve'], { GRAPHRUN_ALLOW_PRIVATE_URLS: value });
      expect(parse).toThrow(CliUsageError);
      expect(parse).toThrow(`GRAPHRUN_ALLOW_PRIVATE_URLS must be 1, true, 0 or false, got "${value}".`);
    });

    it('leaves the other options alone', () => {
      expect(serveOptions(['serve', '--allow-private-urls'], { GRAPHRUN_TOKEN: 't' })).toEqual({
        host: DEFAULT_HOST,
        port: DEFAULT_PORT,
        data: DEFAULT_DATA,
        token: 't',
        runJobs: true,
        allowPrivateUrls: true,
        workers: [],
        musicUpstream: undefined,
        videoUpstream: undefined,
        pool: {},
      });
    });
  });

  describe('--threads / GRAPHRUN_THREADS', () => {
    it('takes a count from the flag or the variable, the flag over the variable', () => {
      expect(serveOptions(['serve', '--threads', '3']).threads).toBe(3);
      expect(serveOptions(['serve'], { GRAPHRUN_THREADS: '2' }).threads).toBe(2);
      expect(serveOptions(['serve', '--threads=4'], { GRAPHRUN_THREADS: '2' }).threads).toBe(4);
    });

    it.each([['0'], ['-1'], ['1.5'], ['many'], ['257']])('rejects --threads %j, naming where it came from', (value) => {
      expect(() => parseCliArgs(['serve', `--threads=${value}`])).toThrow(/--threads must be a whole number from 1 to 256/);
      expect(() => parseCliArgs(['serve'], { GRAPHRUN_THREADS: value })).toThrow(/GRAPHRUN_THREADS must be a whole number/);
    });
  });

  describe('--job-lease-seconds / GRAPHRUN_JOB_LEASE_SECONDS', () => {
    it('takes whole seconds from the flag or the variable, the flag over the variable; unset by default', () => {
      expect(serveOptions(['serve']).jobLeaseSeconds).toBeUndefined();
      expect(serveOptions(['serve', '--job-lease-seconds', '5']).jobLeaseSeconds).toBe(5);
      expect(serveOptions(['serve'], { GRAPHRUN_JOB_LEASE_SECONDS: '60' }).jobLeaseSeconds).toBe(60);
      expect(serveOptions(['serve', '--job-lease-seconds=7'], { GRAPHRUN_JOB_LEASE_SECONDS: '60' }).jobLeaseSeconds).toBe(7);
      expect(parseCliArgs(['runner', '--job-lease-seconds', '4'])).toMatchObject({ command: 'runner', options: { jobLeaseSeconds: 4 } });
    });

    it.each([['2'], ['3601'], ['1.5'], ['soon']])('rejects %j, naming where it came from', (value) => {
      expect(() => parseCliArgs(['serve', `--job-lease-seconds=${value}`])).toThrow(
        /--job-lease-seconds must be a whole number of seconds from 3 to 3600/,
      );
      expect(() => parseCliArgs(['runner'], { GRAPHRUN_JOB_LEASE_SECONDS: value })).toThrow(/GRAPHRUN_JOB_LEASE_SECONDS must be/);
    });
  });

  describe('--worker / GRAPHRUN_WORKERS', () => {
    it('is empty by default: jobs run in process', () => {
      expect(serveOptions(['serve']).workers).toEqual([]);
    });

    it('takes one or more --worker flags, in order, without a trailing slash', () => {
      expect(serveOptions(['serve', '--worker', 'http://gpu-1:8188/', '--worker=https://gpu-2.example:443']).workers).toEqual([
        'http://gpu-1:8188',
        'https://gpu-2.example:443',
      ]);
    });

    it('takes GRAPHRUN_WORKERS comma-separated, and the flags over it', () => {
      expect(serveOptions(['serve'], { GRAPHRUN_WORKERS: 'http://a:8188, http://b:8188,' }).workers).toEqual(['http://a:8188', 'http://b:8188']);
      expect(serveOptions(['serve', '--worker', 'http://c:1'], { GRAPHRUN_WORKERS: 'http://a:8188' }).workers).toEqual(['http://c:1']);
      expect(serveOptions(['serve'], { GRAPHRUN_WORKERS: '' }).workers).toEqual([]);
    });

    it.each([['ftp://a'], ['gpu-1:8188'], ['http://a:8188?x=1'], ['not a url']])('rejects --worker %j', (url) => {
      expect(() => parseCliArgs(['serve', '--worker', url])).toThrow(/--worker must be an http\(s\) URL/);
    });

    it('names the variable when a bad worker came from the environment', () => {
      expect(() => parseCliArgs(['serve'], { GRAPHRUN_WORKERS: 'http://a:1,bogus' })).toThrow(/GRAPHRUN_WORKERS must be an http\(s\) URL.*"bogus"/);
    });
  });

  describe('--music-upstream / --video-upstream', () => {
    it('is off by default: the local providers generate', () => {
      expect(serveOptions(['serve'])).toMatchObject({ musicUpstream: undefined, videoUpstream: undefined });
    });

    it('takes the URL from the flag or the variable and the token from the environment only', () => {
      const env = {
        GRAPHRUN_MUSIC_UPSTREAM_TOKEN: 'mt',
        GRAPHRUN_VIDEO_UPSTREAM_URL: 'https://v.example/proxy/videogen/',
        GRAPHRUN_VIDEO_UPSTREAM_TOKEN: 'vt',
      };
      expect(serveOptions(['serve', '--music-upstream', 'https://m.example/proxy/musicgen'], env)).toMatchObject({
        musicUpstream: { baseUrl: 'https://m.example/proxy/musicgen', token: 'mt' },
        videoUpstream: { baseUrl: 'https://v.example/proxy/videogen', token: 'vt' },
      });
      expect(serveOptions(['serve', '--video-upstream', 'http://w:1'], env).videoUpstream).toEqual({ baseUrl: 'http://w:1', token: 'vt' });
    });

    it('refuses a URL without its token, naming the variable', () => {
      expect(() => parseCliArgs(['serve', '--music-upstream', 'https://m.example'])).toThrow(
        /--music-upstream needs the vendor's token in GRAPHRUN_MUSIC_UPSTREAM_TOKEN/,
      );
      expect(() => parseCliArgs(['serve'], { GRAPHRUN_VIDEO_UPSTREAM_URL: 'https://v.example' })).toThrow(
        /GRAPHRUN_VIDEO_UPSTREAM_URL needs the vendor's token in GRAPHRUN_VIDEO_UPSTREAM_TOKEN/,
      );
    });

    it.each([['ftp://m'], ['m.example'], ['https://m.example/?a=1']])('rejects --music-upstream %j', (url) => {
      expect(() => parseCliArgs(['serve', '--music-upstream', url], { GRAPHRUN_MUSIC_UPSTREAM_TOKEN: 't' })).toThrow(
        /--music-upstream must be an http\(s\) URL/,
      );
    });
  });
});
