/**
 * `npm start`: the whole service on this machine over the local cloud.
 *
 *   HOST (default 127.0.0.1), PORT (default 3000), DATA_DIR (default .data),
 *   --memory to keep nothing.
 *
 * Prints the base URL once ready; stops cleanly on SIGINT/SIGTERM; exits 1 with a
 * one-line reason when it cannot start.
 */
import { startLocalCloud, type LocalCloud } from '#local/cloud';

function usage(): never {
  process.stderr.write('usage: npm start [-- --memory]   (env: HOST, PORT, DATA_DIR)\n');
  process.exit(2);
}

function parsePort(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 3000;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`error: PORT must be a number from 0 to 65535, not "${raw}"\n`);
    process.exit(1);
  }
  return port;
}

const args = process.argv.slice(2);
if (args.some((arg) => arg !== '--memory')) usage();
const memory = args.includes('--memory');
const dataDirText = process.env.DATA_DIR || '.data';
const host = process.env.HOST || '127.0.0.1';
const port = parsePort(process.env.PORT);

let signals = 0;
let starting: Promise<LocalCloud> | undefined;
async function shutdown(): Promise<void> {
  // Ctrl-C under tsx or npm can arrive twice (from the terminal and relayed by the
  // wrapper): stop once. Stopping is bounded (SIGKILL after a grace period), so there is
  // no need for a forced exit on a second signal.
  if (++signals > 1) return;
  try {
    // A signal during start-up waits for the start to settle, then stops what started.
    const cloud = await starting?.catch(() => undefined);
    await cloud?.stop();
    process.exit(0);
  } catch (error) {
    process.stderr.write(`error: stopping failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
// Installed before starting, so an early Ctrl-C cannot skip the clean stop.
process.on('SIGINT', () => void shutdown());
process.on('SIGTERM', () => void shutdown());

starting = startLocalCloud({ host, port, dataDir: memory ? null : dataDirText });
try {
  const cloud = await starting;
  if (signals === 0) {
    const where = memory ? 'in memory, nothing kept' : `data in ${dataDirText.endsWith('/') ? dataDirText : `${dataDirText}/`}`;
    for (const warning of cloud.warnings) process.stderr.write(`warning: ${warning}\n`);
    process.stdout.write(`Agent Session Service listening on ${cloud.baseUrl} (${where})\n`);
    process.stdout.write(`Console: ${cloud.baseUrl}/console/ (sign in with any email of FOUNDER_EMAILS, dev@localhost by default)\n`);
  }
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`error: ${message.split('\n')[0]}\n`);
  process.exit(1);
}
