/**
 * The local Lambda sandbox pool: environments kept warm are initialized before the pool says
 * so and count busy or idle (as provisioned concurrency does), those that end are replaced
 * one at a time (a burst of failures must not start as many imports beside the environments
 * still serving), a module that cannot be imported is not retried, and only environments
 * beyond the kept-warm count end when idle.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSandboxPool, type Sandbox } from '#local/lambda-sandboxes';
import { isAlive } from '../support/processes';

const MODULE = fileURLToPath(new URL('./fixtures/pool-function.ts', import.meta.url));

interface Entry {
  what: 'init-start' | 'init-end';
  pid: number;
  time: number;
}

let dir: string;
let journalFile: string;
let pools: ReturnType<typeof createSandboxPool>[];

async function journal(): Promise<Entry[]> {
  const text = await readFile(journalFile, 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Entry);
}

const inits = async () => (await journal()).filter((entry) => entry.what === 'init-end');

function pool(env: Record<string, string> = {}, idleMs?: number) {
  const created = createSandboxPool({ env: { ...process.env, POOL_JOURNAL: journalFile, ...env }, ...(idleMs ? { idleMs } : {}) });
  pools.push(created);
  return created;
}

let request = 0;
const invoke = (sandbox: Sandbox, event: { crash?: boolean } = {}) =>
  sandbox.invoke({ module: MODULE, event, functionName: 'f', invokedFunctionArn: 'arn:f', awsRequestId: `r-${request++}` }, 5_000).then(Number);


async function until<T>(check: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  for (const deadline = Date.now() + ms; ; await sleep(50)) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
  }
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sandbox-pool-test-'));
  journalFile = join(dir, 'journal.jsonl');
  pools = [];
});

afterEach(async () => {
  await Promise.all(pools.map((created) => created.close()));
  await rm(dir, { recursive: true, force: true });
});

describe('the sandbox pool', { timeout: 30_000 }, () => {
  it('resolves keepWarm once every kept-warm environment is initialized, and serves from them', async () => {
    const sandboxes = pool();

    await sandboxes.keepWarm('f', MODULE, 3);

    const ready = await inits();
    expect(ready).toHaveLength(3);
    const pid = await invoke(sandboxes.acquire('f'));
    expect(ready.map((entry) => entry.pid)).toContain(pid);
  });

  it('starts no environment when a burst takes the kept-warm ones: they still count', async () => {
    const sandboxes = pool();
    await sandboxes.keepWarm('f', MODULE, 3);

    const burst = [sandboxes.acquire('f'), sandboxes.acquire('f'), sandboxes.acquire('f')];
    await Promise.all(burst.map((sandbox) => invoke(sandbox)));
    for (const sandbox of burst) sandboxes.release(sandbox);
    await sleep(800);

    expect(await journal()).toHaveLength(6);
  });

  it('replaces kept-warm environments that end, one at a time, back to the count', async () => {
    const sandboxes = pool();
    await sandboxes.keepWarm('f', MODULE, 3);
    const warmPids = new Set((await inits()).map((entry) => entry.pid));

    const burst = [sandboxes.acquire('f'), sandboxes.acquire('f'), sandboxes.acquire('f')];
    await Promise.allSettled(burst.map((sandbox) => invoke(sandbox, { crash: true })));

    const all = await until(async () => ((await inits()).length >= 6 ? journal() : undefined));
    const replacements = all.filter((entry) => !warmPids.has(entry.pid));
    const starts = replacements.filter((entry) => entry.what === 'init-start');
    const ends = replacements.filter((entry) => entry.what === 'init-end');
    expect(starts).toHaveLength(3);
    // Each replacement's init starts only once the one before it is done.
    for (let i = 1; i < starts.length; i++) expect(starts[i]!.time).toBeGreaterThanOrEqual(ends[i - 1]!.time);
    await sleep(500);
    expect(await inits()).toHaveLength(6);
  });

  it('does not retry a module that cannot be imported, and keepWarm still resolves', async () => {
    const sandboxes = pool({ POOL_BROKEN: '1' });

    await sandboxes.keepWarm('f', MODULE, 2);
    await sleep(1_000);

    const entries = await journal();
    expect(entries.filter((entry) => entry.what === 'init-start')).toHaveLength(2);
    expect(entries.filter((entry) => entry.what === 'init-end')).toHaveLength(0);
  });

  it('ends idle environments beyond the kept-warm count, and keeps the kept-warm ones', async () => {
    const sandboxes = pool({}, 300);
    await sandboxes.keepWarm('f', MODULE, 1);
    const [first, second] = [sandboxes.acquire('f'), sandboxes.acquire('f')];
    const pids = await Promise.all([invoke(first), invoke(second)]);

    sandboxes.release(first);
    sandboxes.release(second);
    await sleep(1_500);

    const alive = [...pids, ...(await inits()).map((entry) => entry.pid)].filter((pid, i, list) => list.indexOf(pid) === i && isAlive(pid));
    expect(alive).toHaveLength(1);
  });
});
