/**
 * The child side of `cloud-process.ts`: starts the local cloud with the options given as
 * JSON in argv[2], reports over IPC, and stops cleanly on SIGTERM or SIGINT, or when the
 * parent goes away (the IPC channel closes, however the parent died).
 */
import { startLocalCloud, type LocalCloud, type LocalCloudOptions } from './cloud';
import type { CloudProcessMessage } from './cloud-process';

const options = JSON.parse(process.argv[2] ?? '{}') as LocalCloudOptions;
let starting: Promise<LocalCloud> | undefined;
let stopping = false;

async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  const cloud = await starting?.catch(() => undefined);
  await cloud?.stop();
  process.exit(0);
}
// Installed before starting, so an early stop request still stops what has started.
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
process.on('disconnect', () => void stop());

function report(message: CloudProcessMessage): Promise<void> {
  return new Promise((resolve) => process.send?.(message, () => resolve()) ?? resolve());
}

starting = startLocalCloud(options);
try {
  const { baseUrl, env, dataDir, emulators, warnings } = await starting;
  await report({ started: { baseUrl, env, dataDir, emulators, warnings } });
} catch (error) {
  await report({ failed: error instanceof Error ? error.message : String(error) });
  process.exit(1);
}
