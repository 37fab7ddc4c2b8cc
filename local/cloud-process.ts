/**
 * The local cloud in a Node process of its own, its stdout and stderr (the service's
 * JSON logs) going to a file. The integration tests use it: the service's logs stay out
 * of the test output and can be inspected, and handlers run beside, not inside, the test
 * runner, as they run beside `npm start`'s terminal.
 */
import { closeSync, openSync } from 'node:fs';
import { spawnChild, typeScriptEntry } from './child-process';
import type { LocalCloud, LocalCloudOptions } from './cloud';
import { LocalCloudError } from './errors';

export interface CloudProcessOptions extends LocalCloudOptions {
  /** Appended to; the service's stdout and stderr. */
  logFile: string;
}

/** What the child reports over IPC once it has started, or failed to. */
export type CloudProcessMessage = { started: Pick<LocalCloud, 'baseUrl' | 'env' | 'dataDir' | 'emulators' | 'warnings'> } | { failed: string };

export interface CloudProcess extends LocalCloud {
  /** Kills the service process outright, as a crash would; its children must follow on their own. */
  crash(): Promise<void>;
}

/** Starts the local cloud in a child process; resolves once it is ready. */
export async function startCloudProcess(options: CloudProcessOptions): Promise<CloudProcess> {
  const { logFile, ...cloudOptions } = options;
  const log = openSync(logFile, 'a');
  const child = spawnChild(
    process.execPath,
    [...typeScriptEntry(new URL('./cloud-process-entry.ts', import.meta.url)), JSON.stringify(cloudOptions)],
    { stdio: ['ignore', log, log, 'ipc'] },
  );
  closeSync(log);

  const message = await new Promise<CloudProcessMessage>((resolve) => {
    child.process.once('message', (received) => resolve(received as CloudProcessMessage));
    void child.exited.then((exit) =>
      resolve({ failed: `the local cloud process exited (${exit.error?.message ?? exit.signal ?? exit.code}); its output is in ${logFile}` }),
    );
  });
  if ('failed' in message) {
    await child.stop();
    throw new LocalCloudError(message.failed);
  }

  let stopping: Promise<void> | undefined;
  // Stopping flushes state and stops the emulators; SIGKILL only if that hangs.
  return {
    ...message.started,
    stop: () => (stopping ??= child.stop(15_000)),
    crash: async () => {
      child.process.kill('SIGKILL');
      await child.exited;
    },
  };
}
