/**
 * The terminal tool's execution environments and workspaces, end to end: the sandbox
 * function is tenant-isolated (one invocation per environment), so nothing a command leaves
 * behind meets another invocation's commands; an invocation's files last from one command to
 * the next, in the same environment or, restored from its snapshot, in a fresh one.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SNAPSHOT_BYTES } from '#contracts/sandbox';
import { startCloudProcess, type CloudProcess } from '#local/cloud-process';
import { answer, startFakeOpenAI, toolCall, type FakeOpenAIServer } from '../fakes/openai-server';
import { newOrganization, request } from './support';

let model: FakeOpenAIServer;

beforeAll(async () => {
  model = await startFakeOpenAI();
});

afterAll(() => model.close());

interface Organization {
  token: string;
}

/** Runs one invocation whose model makes the given terminal commands in turn; answers with the tool results. */
async function runCommands(organization: Organization, key: string, commands: string[], base?: string) {
  model.enqueue(...commands.map((command) => toolCall('terminal', { command })), answer(`ran ${commands.length}`));
  const before = model.requests.length;
  const res = await request('POST', `/sessions/${key}?wait_timeout_seconds=60`, {
    ...(base ? { base } : {}),
    token: organization.token,
    headers: { 'idempotency-key': key },
    body: {
      user_prompt: 'Use the terminal',
      agent_name: 'shell',
      agent: { model: { name: 'gpt-fake', provider: { name: 'openai', url: model.url } }, tools: { terminal: { timeout_seconds: 60 } } },
    },
  });
  expect(res.status).toBe(200);
  const last = model.requests.slice(before).at(-1)!;
  return last.body.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
}

// A spy that leaves the command's process group and clears its environment (so nothing
// marks it), then lists /tmp and the workspaces every 100 ms into a file of its own. The
// command waits until it has left the group, which is killed once the command exits.
const SPY = `env -i setsid sh -c 'while :; do ls -A /tmp /tmp/lambda/workspaces > /tmp/spy.txt 2>&1; sleep 0.1; done' > /dev/null 2>&1 < /dev/null & sleep 0.5`;
// What a later command can see of it: its process (the pattern does not match this command's own line), or its file.
const LOOK = 'ps -eo args | grep -c "[w]hile :" | sed "s/^/spy-processes=/"; test -e /tmp/spy.txt && echo spy-file-seen || echo spy-file-absent';

describe('tenant isolation of the terminal tool', () => {
  it("shows no command of another organization, nor of another invocation, what a command left running, nor its output", async () => {
    const [orgA, orgB] = [await newOrganization(), await newOrganization()];

    const [, spying] = await runCommands(orgA, 'spy-a1', [SPY, `sleep 0.5; ${LOOK}`]);
    const [fromB] = await runCommands(orgB, 'spy-b1', [LOOK]);
    const [fromA2] = await runCommands(orgA, 'spy-a2', [LOOK]);

    // The spy runs on in its own environment: the test would pass vacuously otherwise.
    expect(spying).toContain('spy-processes=1');
    expect(spying).toContain('spy-file-seen');
    for (const seen of [fromB, fromA2]) {
      expect(seen).toContain('spy-processes=0');
      expect(seen).toContain('spy-file-absent');
    }
  });
});

describe('the workspace of an invocation', () => {
  const steps = [
    'echo "from step 1" > notes.txt && mkdir -p src && echo "int main(){}" > src/main.c && touch /tmp/environment-marker',
    'ls -A | wc -l | sed "s/^/entries=/"',
    'cat notes.txt src/main.c; test -e /tmp/environment-marker && echo same-environment || echo fresh-environment',
  ];

  it('keeps the files of step 1 for step 3 in a warm environment', async () => {
    const results = await runCommands(await newOrganization(), 'workspace-warm', steps);

    expect(results[1]).toContain('entries=2');
    expect(results[2]).toContain('from step 1\nint main(){}\nsame-environment');
  });

  it('tells the model when the workspace grows past the bound, and the run goes on', async () => {
    const megabytes = Math.ceil(MAX_SNAPSHOT_BYTES / (1024 * 1024)) + 1;

    const results = await runCommands(await newOrganization(), 'workspace-big', [`head -c ${megabytes}M /dev/urandom > noise.bin && echo written`, 'ls']);

    expect(results[0]).toMatch(/^note: the working directory is now larger than 64 MiB compressed: its files stay for now, but may be lost before a later command/);
    expect(results[0]).toContain('written');
    expect(results[1]).toContain('noise.bin');
  });

  describe('with a fresh environment for every command', () => {
    let dir: string;
    let cloud: CloudProcess;
    let organization: Organization;

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'agent-sessions-fresh-'));
      cloud = await startCloudProcess({ port: 0, dataDir: null, env: { FOUNDER_EMAILS: 'dev@localhost' }, freshSandboxEnvironments: true, logFile: join(dir, 'service.log') });
      organization = { token: (await request('POST', '/local/sign-in', { base: cloud.baseUrl, body: { email: 'dev@localhost' } })).body.token };
    }, 60_000);

    afterAll(async () => {
      await cloud?.stop();
      await rm(dir, { recursive: true, force: true });
    });

    it('restores the files of step 1 for step 3 from the snapshot', async () => {
      const results = await runCommands(organization, 'workspace-fresh', steps, cloud.baseUrl);

      expect(results[1]).toContain('entries=2');
      expect(results[2]).toContain('from step 1\nint main(){}\nfresh-environment');
    });

    it('says the files are gone once the workspace outgrew the bound', async () => {
      const megabytes = Math.ceil(MAX_SNAPSHOT_BYTES / (1024 * 1024)) + 1;

      const results = await runCommands(organization, 'workspace-lost', [`head -c ${megabytes}M /dev/urandom > noise.bin`, 'ls -A | wc -l'], cloud.baseUrl);

      expect(results[1]).toMatch(/^note: the working directory was reset before this command: it had grown past 64 MiB compressed, so its files could not be kept and are gone\nexit code: 0\n--- stdout ---\n0\n/);
    });
  });
});
