/**
 * The S3 emulator: s3rver, storing objects on disk, run in a child Node process (see
 * `s3rver-process.ts` for why) with the payload bucket created.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { lastLine, spawnChild, typeScriptEntry, type ManagedChild } from './child-process';
import { LocalCloudError } from './errors';

export interface S3Options {
  /** Store under `<dataDir>/s3`; null uses a temporary directory the child removes as it exits. */
  dataDir: string | null;
  /** Created at start if missing. */
  bucket: string;
  startTimeoutMs?: number;
}

export interface S3Local {
  endpoint: string;
  /** Where the objects are (removed on stop in memory mode). */
  directory: string;
  stop(): Promise<void>;
}

function readPort(child: ManagedChild, timeoutMs: number): Promise<number> {
  const stdout = child.process.stdout;
  if (!stdout) throw new Error('s3rver child has no stdout');
  return new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: stdout });
    const timer = setTimeout(() => finish(new LocalCloudError('s3rver did not start in time')), timeoutMs);
    function finish(outcome: number | Error): void {
      clearTimeout(timer);
      lines.close();
      if (typeof outcome === 'number') resolve(outcome);
      else reject(outcome);
    }
    lines.on('line', (line) => {
      try {
        const { port } = JSON.parse(line) as { port?: unknown };
        if (typeof port === 'number') finish(port);
      } catch {
        // Not the announcement; s3rver is silent, but a dependency may still print.
      }
    });
    void child.exited.then((exit) => {
      const reason = exit.error?.message || lastLine(child.output()) || `exit code ${exit.code}`;
      finish(new LocalCloudError(`s3rver did not start: ${reason}`));
    });
  });
}

/** Starts s3rver on a free 127.0.0.1 port with the bucket configured; resolves once it listens. */
export async function startS3(options: S3Options): Promise<S3Local> {
  const directory = options.dataDir ? join(options.dataDir, 's3') : await mkdtemp(join(tmpdir(), 'agent-sessions-s3-'));
  await mkdir(directory, { recursive: true });

  // The child watches its stdin pipe itself (no guard shell needed): it closes when this process dies.
  const child = spawnChild(process.execPath, [
    '--openssl-legacy-provider',
    ...typeScriptEntry(new URL('./s3rver-process.ts', import.meta.url)),
    directory,
    options.bucket,
    ...(options.dataDir ? [] : ['--temporary']),
  ]);
  try {
    const port = await readPort(child, options.startTimeoutMs ?? 15_000);
    return {
      endpoint: `http://127.0.0.1:${port}`,
      directory,
      stop: () => child.stop(2000),
    };
  } catch (error) {
    await child.stop(1000);
    // The child may have died before it could remove its directory.
    if (!options.dataDir) await rm(directory, { recursive: true, force: true });
    throw error;
  }
}
