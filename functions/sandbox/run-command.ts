/**
 * The sandbox function: runs one `bash -c` command of the terminal tool in the workspace
 * of its invocation and answers with the exit status and the (capped) output. On AWS it is
 * a function of its own whose role may do nothing, so a command can reach no AWS resource
 * of the service; the credentials Lambda puts into this process's environment are still
 * kept from the command, which sees only a handful of harmless variables.
 *
 * Workspaces live under the function's temporary directory and persist between commands
 * for as long as that directory does: on AWS, within one execution environment.
 */
import { spawn } from 'node:child_process';
import { mkdir, readdir, rm, stat, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { MAX_OUTPUT_BYTES, SandboxRequest, type SandboxResult } from '#contracts/sandbox';

// Once the shell has exited and its group is killed, the pipes close at once unless a
// process that left the group holds them; its output is not waited for beyond this.
const PIPE_GRACE_MS = 500;
// A workspace unused for this long is removed by the next command that runs beside it,
// so the temporary directory (512 MB on Lambda by default) does not fill up over time.
const STALE_WORKSPACE_MS = 24 * 60 * 60 * 1000;
const FALLBACK_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Runs the event's command; a malformed event is an error of the function. */
export async function handler(event: unknown): Promise<SandboxResult> {
  const parsed = SandboxRequest.safeParse(event);
  if (!parsed.success) throw new TypeError(`invalid sandbox request: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const request = parsed.data;
  const root = join(tmpdir(), 'workspaces');
  const workspace = await openWorkspace(root, request.workspace);
  await removeStaleWorkspaces(root, request.workspace);
  return runCommand(request.command, workspace, request.timeout_seconds * 1000);
}

/** The workspace directory, created empty on first use, its last use recorded. */
async function openWorkspace(root: string, id: string): Promise<string> {
  await mkdir(root, { recursive: true, mode: 0o700 });
  const dir = join(root, id);
  await mkdir(dir, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  const now = new Date();
  await utimes(dir, now, now);
  return dir;
}

async function removeStaleWorkspaces(root: string, own: string): Promise<void> {
  for (const name of await readdir(root)) {
    if (name === own) continue;
    const path = join(root, name);
    const stats = await stat(path).catch(() => undefined);
    // A command may leave entries it cannot delete (chmod 000): those stay, nothing fails.
    if (stats && Date.now() - stats.mtimeMs > STALE_WORKSPACE_MS) await rm(path, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** Only what a shell needs: no variable of this process (Lambda's credentials among them) reaches the command. */
function commandEnvironment(workspace: string): Record<string, string> {
  return { PATH: process.env.PATH || FALLBACK_PATH, HOME: workspace, TMPDIR: workspace, LANG: 'C.UTF-8' };
}

/** Keeps the first `limit` bytes of a stream and drains the rest, so the writer never blocks. */
function capture(stream: Readable, limit: number) {
  const chunks: Buffer[] = [];
  let kept = 0;
  let truncated = false;
  stream.on('data', (chunk: Buffer) => {
    const room = limit - kept;
    if (chunk.length > room) truncated = true;
    if (room <= 0) return;
    const part = chunk.subarray(0, room);
    chunks.push(part);
    kept += part.length;
  });
  const closed = new Promise<void>((resolve) => stream.once('close', resolve));
  return { closed, text: () => Buffer.concat(chunks).toString('utf8'), truncated: () => truncated };
}

async function runCommand(command: string, workspace: string, timeoutMs: number): Promise<SandboxResult> {
  // Its own process group (detached), so a timeout kills everything the command started.
  const child = spawn('bash', ['-c', command], {
    cwd: workspace,
    env: commandEnvironment(workspace),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout = capture(child.stdout, MAX_OUTPUT_BYTES);
  const stderr = capture(child.stderr, MAX_OUTPUT_BYTES);
  const killGroup = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // Already gone.
    }
  };

  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
  }, timeoutMs);
  let exit: { code: number | null; signal: NodeJS.Signals | null };
  try {
    exit = await new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code, signal) => resolve({ code, signal }));
    });
  } finally {
    clearTimeout(timer);
  }
  // Whatever the command left running in the background goes with it.
  killGroup();
  let grace: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all([stdout.closed, stderr.closed]),
    new Promise((resolve) => (grace = setTimeout(resolve, PIPE_GRACE_MS))),
  ]);
  clearTimeout(grace);
  child.stdout.destroy();
  child.stderr.destroy();

  return {
    exit_code: exit.code,
    ...(exit.signal ? { signal: exit.signal } : {}),
    stdout: stdout.text(),
    stderr: stderr.text(),
    timed_out: timedOut,
    ...(stdout.truncated() ? { stdout_truncated: true as const } : {}),
    ...(stderr.truncated() ? { stderr_truncated: true as const } : {}),
  };
}
