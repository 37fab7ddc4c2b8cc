/**
 * s3rver in a Node process of its own, started by `s3.ts` as
 * `node --openssl-legacy-provider s3rver-process.ts <directory> <bucket> [--temporary]`: its
 * ListObjectsV2 continuation tokens use DES, which Node only offers with that flag, and
 * the parent (the service's process) should not run with it.
 *
 * Prints `{"port": <n>}` on stdout once listening on 127.0.0.1, and exits when asked to
 * (SIGTERM) or when its stdin closes, which happens when the parent dies, however it dies.
 */
import { rmSync } from 'node:fs';
import S3rver from 's3rver';

const [directory = '', bucket = '', mode] = process.argv.slice(2);
if (!directory || !bucket || (mode !== undefined && mode !== '--temporary')) {
  process.stderr.write('usage: s3rver-process.ts <directory> <bucket> [--temporary]\n');
  process.exit(2);
}
// This process removes a temporary directory itself, so it goes even when the parent was killed.
const temporary = mode === '--temporary';

const server = new S3rver({ address: '127.0.0.1', port: 0, directory, silent: true, configureBuckets: [{ name: bucket }] });
const { port } = await server.run();
process.stdout.write(`${JSON.stringify({ port })}\n`);

let stopping = false;
function exit(): never {
  if (temporary) rmSync(directory, { recursive: true, force: true });
  process.exit(0);
}
function shutdown(): void {
  if (stopping) return;
  stopping = true;
  // Objects are written before they are acknowledged, so there is nothing to flush; the
  // timer only bounds a close held up by a client's open connection.
  setTimeout(exit, 1000).unref();
  void server.close().finally(exit);
}

process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
process.stdin.on('end', shutdown);
process.stdin.resume();
