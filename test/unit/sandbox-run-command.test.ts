import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_OUTPUT_BYTES, MAX_SNAPSHOT_BYTES, type SandboxResult } from '#contracts/sandbox';
import { handler } from '#functions/sandbox/run-command';

// Real commands in real processes: the handler's temporary directory is pointed at a
// directory of this test file's own.
const workspaceId = (name: string) => createHash('sha256').update(name).digest('hex');
const run = (command: string, workspace = 'w1', timeout_seconds = 10) =>
  handler({ workspace: workspaceId(workspace), command, timeout_seconds }) as Promise<SandboxResult>;

/** Whether a process still runs (a zombie waiting for its parent to reap it does not count). */
async function running(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  return stat !== undefined && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
}

/** Waits until the process is gone, for at most `ms`; answers whether it went. */
async function gone(pid: number, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!(await running(pid))) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

let root: string;
const saved = { ...process.env };

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'sandbox-test-'));
  process.env.TMPDIR = root;
});

afterAll(async () => {
  process.env = saved;
  await rm(root, { recursive: true, force: true });
});

describe('the sandbox function', () => {
  it('answers with the exit code, stdout and stderr', async () => {
    const result = await run('echo out; echo err >&2; exit 3');

    expect(result).toEqual({ exit_code: 3, stdout: 'out\n', stderr: 'err\n', timed_out: false, workspace: 'new' });
  });

  it('keeps files between commands of one workspace, and shows them to no other', async () => {
    const first = await run('echo hi > f.txt; pwd', 'persist-a');
    const again = await run('cat f.txt', 'persist-a');
    const other = await run('ls -A; cat f.txt', 'persist-b');

    expect(first).toMatchObject({ stdout: `${join(root, 'workspaces', workspaceId('persist-a'))}\n`, workspace: 'new' });
    expect(again).toMatchObject({ exit_code: 0, stdout: 'hi\n', workspace: 'kept' });
    expect(other.exit_code).toBe(1);
    expect(other.stdout).toBe('');
    expect(other.stderr).toContain('No such file');
  });

  it('clears what another invocation left before a command runs: its workspace and temporary files', async () => {
    // The function's temporary directory is two levels up; a command may write there too.
    const left = await run('echo private > notes.txt && echo private > ../../loose.txt && chmod 000 .', 'org-a');
    expect(left.exit_code).toBe(0);
    expect(await readdir(root)).toContain('loose.txt');

    const other = await run('ls -A $(dirname $PWD) $(dirname $(dirname $PWD))', 'org-b');
    const back = await run('ls -A', 'org-a');

    expect(other.stdout).not.toContain(workspaceId('org-a'));
    expect(other.stdout).not.toContain('loose.txt');
    expect(back).toMatchObject({ exit_code: 0, stdout: '', workspace: 'new' });
  });

  it('kills what a command left running outside its process group before the next command', async () => {
    const started = await run('setsid sleep 60 > /dev/null 2>&1 < /dev/null & echo $!', 'escape');
    const pid = Number(started.stdout.trim());

    expect(await gone(pid)).toBe(true);
  });

  it('gives the command no variable of its own process, credentials least of all', async () => {
    process.env.AWS_ACCESS_KEY_ID = 'AKIACANARY0000000000';
    process.env.AWS_SECRET_ACCESS_KEY = 'secret-canary-value';
    process.env.AWS_SESSION_TOKEN = 'session-canary-value';
    process.env.OPENAI_API_KEY = 'sk-canary-value';

    const result = await run('env', 'env-check');

    const names = result.stdout.trim().split('\n').map((line) => line.slice(0, line.indexOf('=')));
    expect(new Set(names)).toEqual(new Set(['PATH', 'HOME', 'TMPDIR', 'LANG', 'AGENT_SANDBOX_RUN', 'PWD', 'SHLVL', '_']));
    expect(result.stdout).not.toMatch(/canary/i);
    const workspace = join(root, 'workspaces', workspaceId('env-check'));
    expect(result.stdout).toContain(`HOME=${workspace}\n`);
    expect(result.stdout).toContain(`TMPDIR=${workspace}\n`);
  });

  it('kills the command and everything it started when it runs out of time', async () => {
    const result = await run('sleep 60 & echo $!; sleep 60', 'timeout', 1);

    expect(result).toMatchObject({ exit_code: null, signal: 'SIGKILL', timed_out: true });
    const background = Number(result.stdout.trim());
    expect(background).toBeGreaterThan(0);
    expect(await gone(background)).toBe(true);
  });

  it('ends what a finished command left running in the background', async () => {
    const result = await run('sleep 60 >/dev/null 2>&1 & echo $!', 'background');

    expect(result).toMatchObject({ exit_code: 0, timed_out: false });
    expect(await gone(Number(result.stdout.trim()))).toBe(true);
  });

  it('keeps the first 32 KiB of each stream and says the rest was dropped', async () => {
    const result = await run('head -c 5000000 /dev/zero | tr "\\0" a; head -c 40000 /dev/zero | tr "\\0" b >&2', 'caps');

    expect(result.exit_code).toBe(0);
    expect(result.stdout).toBe('a'.repeat(MAX_OUTPUT_BYTES));
    expect(result.stderr).toBe('b'.repeat(MAX_OUTPUT_BYTES));
    expect(result).toMatchObject({ stdout_truncated: true, stderr_truncated: true });
  });

  it('answers with text for output that is not UTF-8', async () => {
    const result = await run("printf 'ok \\377\\376\\000 end'; head -c 2000 /dev/urandom >&2", 'binary');

    expect(result.exit_code).toBe(0);
    expect(result.stdout).toBe('ok \uFFFD\uFFFD\u0000 end');
    expect(JSON.parse(JSON.stringify(result))).toEqual(result);
  });

  it('gives the command no input', async () => {
    const result = await run('cat; echo "read $?"', 'stdin');

    expect(result).toMatchObject({ exit_code: 0, stdout: 'read 0\n' });
  });

  it.each([
    [{ workspace: '../../etc', command: 'true', timeout_seconds: 1 }, /workspace/],
    [{ workspace: workspaceId('x'), command: '', timeout_seconds: 1 }, /command/],
    [{ workspace: workspaceId('x'), command: 'true', timeout_seconds: 301 }, /timeout_seconds/],
    [{ workspace: workspaceId('x'), command: 'x'.repeat(128 * 1024), timeout_seconds: 1 }, /command/],
    [null, /invalid sandbox request/],
  ])('refuses a malformed request %#', async (event, message) => {
    await expect(handler(event)).rejects.toThrow(message);
  });
});

/** Stands in for the presigned URLs of the bucket: GET and PUT of objects kept in memory, 404 when missing. */
function snapshotStore() {
  const objects = new Map<string, Buffer>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const key = request.url!;
      if (request.method === 'PUT') {
        objects.set(key, Buffer.concat(chunks));
        response.writeHead(200).end();
      } else if (objects.has(key)) response.writeHead(200).end(objects.get(key));
      else response.writeHead(404).end('NoSuchKey');
    });
  });
  const listening = new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    objects,
    async urls(name: string) {
      await listening;
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/${name}`;
      return { get: url, put: url };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('the workspace snapshot', { timeout: 30_000 }, () => {
  const store = snapshotStore();
  afterAll(() => store.close());

  const runWith = async (command: string, workspace: string) =>
    (await handler({ workspace: workspaceId(workspace), command, timeout_seconds: 30, snapshot: await store.urls(workspace) })) as SandboxResult;
  // Another workspace's command empties this environment of every other one, as a fresh environment would be.
  const elsewhere = () => run('true', 'someone-else');

  it('is saved after a command that changed the workspace, and only then', async () => {
    const wrote = await runWith('mkdir -p d && echo one > d/f.txt', 'snap-a');
    const read = await runWith('cat d/f.txt', 'snap-a');

    expect(wrote).toMatchObject({ exit_code: 0, workspace: 'new', snapshot: { status: 'saved' } });
    expect((wrote.snapshot as { bytes: number }).bytes).toBe(store.objects.get('/snap-a')!.length);
    expect(read).toMatchObject({ stdout: 'one\n', workspace: 'kept' });
    expect(read.snapshot).toBeUndefined();
  });

  it('restores the files in a fresh environment, and keeps what later commands change', async () => {
    await runWith('echo kept > a.txt && chmod 750 a.txt && ln -s a.txt link', 'snap-b');
    await elsewhere();

    const restored = await runWith('cat link && stat -c %a a.txt && echo two >> a.txt', 'snap-b');
    await elsewhere();
    const again = await runWith('cat a.txt', 'snap-b');

    expect(restored).toMatchObject({ exit_code: 0, stdout: 'kept\n750\n', workspace: 'restored', snapshot: { status: 'saved' } });
    expect(again).toMatchObject({ stdout: 'kept\ntwo\n', workspace: 'restored' });
  });

  it('is not kept past the bound: the model is told, and a fresh environment says the files were lost', async () => {
    const megabytes = Math.ceil(MAX_SNAPSHOT_BYTES / (1024 * 1024)) + 1;
    const big = await runWith(`head -c ${megabytes}M /dev/urandom > noise.bin && echo small > note.txt`, 'snap-c');
    const stillHere = await runWith('cat note.txt', 'snap-c');
    await elsewhere();
    const fresh = await runWith('ls -A', 'snap-c');

    expect(big).toMatchObject({ exit_code: 0, snapshot: { status: 'too_large' } });
    expect(store.objects.get('/snap-c')).toHaveLength(0);
    expect(stillHere).toMatchObject({ stdout: 'small\n', workspace: 'kept' });
    expect(fresh).toMatchObject({ exit_code: 0, stdout: '', workspace: 'lost' });
  });

  it('says when the snapshot could not be stored, and the command still answers', async () => {
    const { get } = await store.urls('snap-d');
    const result = (await handler({
      workspace: workspaceId('snap-d'),
      command: 'echo x > f && echo done',
      timeout_seconds: 5,
      snapshot: { get, put: 'http://127.0.0.1:9/refused' },
    })) as SandboxResult;

    expect(result).toMatchObject({ exit_code: 0, stdout: 'done\n', workspace: 'new', snapshot: { status: 'failed' } });
  });

  it('fails the command when a fresh workspace cannot be restored, and tries again at the next', async () => {
    await runWith('echo saved > f', 'snap-e');
    await elsewhere();
    const unreachable = { workspace: workspaceId('snap-e'), command: 'cat f', timeout_seconds: 5, snapshot: { get: 'http://127.0.0.1:9/x', put: 'http://127.0.0.1:9/x' } };

    await expect(handler(unreachable)).rejects.toThrow();
    expect(await runWith('cat f', 'snap-e')).toMatchObject({ stdout: 'saved\n', workspace: 'restored' });
  });

  it('refuses a workspace that is not the environment\'s tenant', async () => {
    const event = { workspace: workspaceId('tenant-a'), command: 'true', timeout_seconds: 1 };

    await expect(handler(event, { tenantId: workspaceId('tenant-b') })).rejects.toThrow(/tenant/);
    await expect(handler(event, { tenantId: workspaceId('tenant-a') })).resolves.toMatchObject({ exit_code: 0 });
  });
});
