/**
 * The sandbox function: runs one `bash -c` command of the terminal tool in the workspace
 * of its invocation and answers with the exit status and the (capped) output. On AWS it is
 * a function of its own whose role may do nothing, so a command can reach no AWS resource
 * of the service; the credentials Lambda puts into this process's environment are still
 * kept from the command, which sees only a handful of harmless variables.
 *
 * It runs in tenant isolation mode, the tenant being the invocation (its workspace id): an
 * execution environment only ever serves one invocation's commands, so nothing a command
 * leaves behind, files or processes, can meet another invocation's. Workspaces live under
 * the function's temporary directory and, when the caller hands snapshot URLs, are saved
 * after each command that changed them and restored in a fresh environment (`snapshot.ts`).
 * An environment serving commands without a tenant (a deployment without isolation) is
 * still emptied of other workspaces and marked processes before each command.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { MAX_OUTPUT_BYTES, SandboxRequest, type SandboxResult } from '#contracts/sandbox';
import { fingerprint, restoreSnapshot, saveSnapshot } from './snapshot';

// Once the shell has exited and its group is killed, the pipes close at once unless a
// process that left the group holds them; its output is not waited for beyond this.
const PIPE_GRACE_MS = 500;
const FALLBACK_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Runs the event's command; a malformed event, or one for another tenant's workspace, is an error of the function. */
export async function handler(event: unknown, context?: { tenantId?: string }): Promise<SandboxResult> {
  const parsed = SandboxRequest.safeParse(event);
  if (!parsed.success) throw new TypeError(`invalid sandbox request: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const request = parsed.data;
  // Under tenant isolation the tenant is the invocation: its environment serves no other workspace.
  if (context?.tenantId !== undefined && context.tenantId !== request.workspace) throw new TypeError('the workspace is not this environment\'s tenant');
  await killMarkedProcesses();
  const { dir, created } = await openWorkspace(join(tmpdir(), 'workspaces'), request.workspace);
  try {
    const workspace = created ? await fill(dir, request.snapshot?.get) : 'kept';
    const before = request.snapshot ? await fingerprint(dir) : '';
    const result = await runCommand(request.command, dir, request.timeout_seconds * 1000);
    const changed = request.snapshot !== undefined && (await fingerprint(dir)) !== before;
    return { ...result, workspace, ...(changed ? { snapshot: await saveSnapshot(dir, request.snapshot!.put) } : {}) };
  } finally {
    await killMarkedProcesses();
  }
}

/** Fills a workspace created empty from the invocation's snapshot; one that could not be filled is removed, so the next command tries again. */
async function fill(dir: string, snapshotUrl: string | undefined): Promise<SandboxResult['workspace']> {
  if (!snapshotUrl) return 'new';
  try {
    return await restoreSnapshot(dir, snapshotUrl);
  } catch (error) {
    await removeAll(dir);
    throw error;
  }
}

/**
 * The workspace directory, created empty when this environment does not hold it, after
 * everything else in the temporary directory is removed. Fails rather than run a command
 * beside another invocation's files.
 */
async function openWorkspace(root: string, id: string): Promise<{ dir: string; created: boolean }> {
  for (const name of await readdir(tmpdir())) {
    if (name !== 'workspaces') await removeAll(join(tmpdir(), name));
  }
  await mkdir(root, { recursive: true, mode: 0o700 });
  for (const name of await readdir(root)) {
    if (name !== id) await removeAll(join(root, name));
  }
  const dir = join(root, id);
  const created = await mkdir(dir, { mode: 0o700 }).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
      return false;
    },
  );
  return { dir, created };
}

async function removeAll(path: string): Promise<void> {
  try {
    await rm(path, { recursive: true, force: true });
  } catch {
    // A command may have taken its own permissions away (chmod 000): give them back first.
    spawnSync('chmod', ['-R', 'u+rwx', path], { stdio: 'ignore' });
    await rm(path, { recursive: true, force: true });
  }
}

// Every command carries this mark in its environment, and so does whatever it starts
// unless it clears its environment on purpose: how processes that left the command's
// process group (setsid, double fork) are found and killed before the next command.
const MARK = `AGENT_SANDBOX_RUN=${randomBytes(16).toString('hex')}`;

/** SIGKILLs every process of this user whose environment holds this environment's mark. */
async function killMarkedProcesses(): Promise<void> {
  // Without /proc (not Linux) there is nothing to scan; Lambda always has it.
  const pids = await readdir('/proc').catch(() => [] as string[]);
  for (const pid of pids.filter((name) => /^\d+$/.test(name))) {
    const environ = await readFile(`/proc/${pid}/environ`, 'latin1').catch(() => '');
    if (environ.split('\0').includes(MARK)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
  }
}

/** Only what a shell needs: no variable of this process (Lambda's credentials among them) reaches the command. */
function commandEnvironment(workspace: string): Record<string, string> {
  const [markName, markValue] = MARK.split('=') as [string, string];
  return { PATH: process.env.PATH || FALLBACK_PATH, HOME: workspace, TMPDIR: workspace, LANG: 'C.UTF-8', [markName]: markValue };
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

async function runCommand(command: string, workspace: string, timeoutMs: number): Promise<Omit<SandboxResult, 'workspace' | 'snapshot'>> {
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
