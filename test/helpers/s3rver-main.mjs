// s3rver in a process of its own, run by test/helpers/s3rver.ts with
// --openssl-legacy-provider: s3rver makes ListObjectsV2 continuation tokens
// with DES, which OpenSSL 3 refuses otherwise (every truncated listing would
// answer 500). Args: directory, bucket. Prints the port it listens on; ends
// when its standard input closes, so it never outlives the test process.
import S3rver from 's3rver';

const [directory, bucket] = process.argv.slice(2);
const server = new S3rver({ address: '127.0.0.1', port: 0, directory, silent: true, configureBuckets: [{ name: bucket, configs: [] }] });
const { port } = await server.run();
process.stdout.write(`${port}\n`);
process.stdin.resume();
process.stdin.on('close', () => {
  server.close().then(() => process.exit(0));
});
