/**
 * What the terminal tool's workspace snapshots add to a command, for a workspace of 1 MiB
 * (incompressible: the compressed snapshot is 1 MiB too): the sandbox function's handler,
 * run here against the local cloud's S3 emulator through URLs signed as RunSteps signs
 * them, against the same commands with no snapshot.
 * - a command that changes nothing: the workspace is fingerprinted before and after;
 * - a command that changes it: fingerprints, then the gzipped tar is stored;
 * - the first command in a fresh environment: the snapshot is fetched and unpacked first.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { workspaceSnapshotUrls } from '#data/payloads';
import type { LocalCloud } from '#local/cloud';
import { figures, printComparison, sample } from './stats';

const RUNS = Number(process.env.BENCH_WORKSPACE_RUNS ?? 30);
const FILES = 16;
const WORKSPACE_BYTES = 1024 * 1024;

/** Prints the added time per command of the snapshot and of the restore. */
export async function benchWorkspace(_cloud: LocalCloud): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'bench-workspace-'));
  const savedTmp = process.env.TMPDIR;
  // The handler keeps workspaces under its temporary directory, as in a Lambda environment.
  process.env.TMPDIR = root;
  try {
    const { handler } = await import('#functions/sandbox/run-command');
    const id = (name: string) => createHash('sha256').update(name).digest('hex');
    const run = async (workspace: string, command: string, snapshot?: { get: string; put: string }) =>
      handler({ workspace: id(workspace), command, timeout_seconds: 60, ...(snapshot ? { snapshot } : {}) });
    const chunk = WORKSPACE_BYTES / FILES;
    const fill = `for i in $(seq 1 ${FILES}); do head -c ${chunk} /dev/urandom > data-$i.bin; done`;
    const urls = await workspaceSnapshotUrls('bench-org', 'bench-workspace', 900);
    // Another workspace's command empties the environment of this one, as a fresh environment would find it.
    const elsewhere = () => run('elsewhere', 'true');

    await run('plain', fill);
    await run('snap', fill, urls);
    const unchangedBare = await sample(RUNS, () => run('plain', 'true'), 3);
    const unchanged = await sample(RUNS, () => run('snap', 'true', urls), 3);
    const changedBare = await sample(RUNS, () => run('plain', 'date > stamp'), 3);
    const changed = await sample(RUNS, () => run('snap', 'date > stamp', urls), 3);
    const restoreTimes: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      await elsewhere();
      const start = performance.now();
      const result = await run('snap', 'true', urls);
      restoreTimes.push(performance.now() - start);
      if (result.workspace !== 'restored') throw new Error(`expected a restore, got ${result.workspace}`);
    }

    const base = figures(unchangedBare);
    printComparison(`Terminal workspace snapshots, a ${WORKSPACE_BYTES / (1024 * 1024)} MiB workspace in ${FILES} files (incompressible), ${RUNS} commands each`, [
      ['command, no snapshots', base],
      ['command that changes nothing, fingerprinted', figures(unchanged)],
      ['command that changes a file, no snapshots', figures(changedBare)],
      ['command that changes a file, snapshot stored', figures(changed)],
      ['first command in a fresh environment, restored', figures(restoreTimes)],
    ], base);
    const added = (times: number[], bare: number[]) => (figures(times).p50 - figures(bare).p50).toFixed(1);
    console.log(`  added per command (p50): ${added(unchanged, unchangedBare)} ms unchanged, ${added(changed, changedBare)} ms to store, ${added(restoreTimes, unchangedBare)} ms to restore`);
    const stored = (await run('snap', 'date > stamp', urls)).snapshot;
    console.log(`  snapshot stored: ${stored?.status === 'saved' ? `${(stored.bytes / 1024).toFixed(0)} KiB` : stored?.status}`);
  } finally {
    if (savedTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmp;
    await rm(root, { recursive: true, force: true });
  }
}
