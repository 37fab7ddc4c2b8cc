/**
 * Child processes of the local cloud (DynamoDB Local, s3rver, the cloud itself for the
 * integration tests): spawned in their own process group so a terminal's Ctrl-C reaches
 * only the parent, which then stops them in order; stopped with SIGTERM, then SIGKILL
 * after a grace period; and killed if the parent exits without stopping them. A parent
 * killed by a signal runs no exit handler, so each child also notices the parent's death
 * by itself: s3rver and the cloud through their stdin or IPC channel closing, the JVM
 * through the guard shell below.
 */
import { spawn, type ChildProcess, type SpawnOptions, type StdioOptions } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all (e.g. ENOENT). */
  error?: NodeJS.ErrnoException;
}

export interface ManagedChild {
  process: ChildProcess;
  /** The last output of stdout and stderr (when piped), for error messages. */
  output(): string;
  /** Settles once the process is gone (or failed to start). */
  exited: Promise<ChildExit>;
  /** SIGTERM, then SIGKILL once `graceMs` has passed; resolves when it is gone. */
  stop(graceMs?: number): Promise<void>;
}

const OUTPUT_LIMIT = 8192;
const live = new Set<ChildProcess>();
let exitHookInstalled = false;

/** A TCP port free on 127.0.0.1 right now (another process may still take it first). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    // The negative pid addresses the whole group, so helpers the child started go too.
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Only synchronous work runs in 'exit': kill whatever was not stopped properly, so a
  // crash of the parent never leaves a JVM holding a port and a data directory.
  process.on('exit', () => {
    for (const child of live) signalGroup(child, 'SIGKILL');
  });
}

/**
 * Runs "$@" under a POSIX shell that stops it when the parent goes away: the shell holds
 * the parent's stdin pipe, which reaches end of file when the parent dies, even by
 * SIGKILL. It is for programs that cannot watch their parent themselves (a JVM). A
 * SIGTERM to the shell is passed on, and the shell waits for the program to finish.
 */
const GUARD_SCRIPT = `
exec 3<&0
"$@" </dev/null &
child=$!
(read -r _ <&3; kill -TERM "$child" 2>/dev/null) &
watcher=$!
exec 3<&-
trap 'kill -TERM "$child" 2>/dev/null' TERM INT
wait "$child"
code=$?
while kill -0 "$child" 2>/dev/null; do wait "$child"; code=$?; done
kill "$watcher" 2>/dev/null
exit "$code"
`;

/** Exit code of the guard shell when the command was not found. */
export const COMMAND_NOT_FOUND = 127;

export interface SpawnChildOptions {
  /** Stop the child when this process dies, via the guard shell (see `GUARD_SCRIPT`). */
  guard?: boolean;
  /** Default: all three piped (the guard shell needs stdin piped). */
  stdio?: StdioOptions;
  /** Default: this process's environment. */
  env?: NodeJS.ProcessEnv;
}

/** Spawns `command` in its own process group, keeping the tail of its output. */
export function spawnChild(command: string, args: readonly string[], options: SpawnChildOptions = {}): ManagedChild {
  installExitHook();
  const spawnOptions: SpawnOptions = { detached: true, stdio: options.stdio ?? ['pipe', 'pipe', 'pipe'], ...(options.env ? { env: options.env } : {}) };
  const child = options.guard
    ? spawn('/bin/sh', ['-c', GUARD_SCRIPT, command, command, ...args], spawnOptions)
    : spawn(command, args, spawnOptions);
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-OUTPUT_LIMIT);
  };
  child.stderr?.on('data', keep);
  child.stdout?.on('data', keep);
  live.add(child);

  const exited = new Promise<ChildExit>((resolve) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      live.delete(child);
      resolve({ code: null, signal: null, error });
    });
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    });
  });

  return {
    process: child,
    output: () => tail,
    exited,
    async stop(graceMs = 5000) {
      // SIGTERM to the child alone (the guard shell passes it on and waits); SIGKILL to
      // the whole group if it is still there after the grace period.
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Node arguments that run a TypeScript file (through tsx's loader, resolved from here). */
export function typeScriptEntry(file: URL): string[] {
  const loader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return ['--import', loader, fileURLToPath(file)];
}

/** The last non-empty line of some output, for one-line error messages. */
export function lastLine(text: string): string {
  const lines = text.split('\n').map((line) => line.trim()).filter(Boolean);
  return lines.at(-1) ?? '';
}
