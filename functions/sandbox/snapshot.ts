/**
 * The workspace snapshot of an invocation: a gzipped tar of its working directory, kept in
 * the payload bucket beside the invocation's checkpoints, so a command that lands in a new
 * execution environment (Lambda recycled or scaled out the last one) finds the files the
 * earlier commands left. The sandbox holds no AWS permission: it reads and writes the one
 * object through presigned URLs its caller signs for this invocation only.
 *
 * An empty object marks a workspace that outgrew the bound: restoring it gives an empty
 * directory and says the files were lost, rather than bringing back an older state.
 */
import { createHash } from 'node:crypto';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { create, extract } from 'tar';
import { MAX_SNAPSHOT_BYTES, type SandboxResult } from '#contracts/sandbox';

// A PUT or GET of the snapshot that takes longer than this is given up.
const TRANSFER_TIMEOUT_MS = 60_000;

/** What the workspace holds, as a digest of every entry's path, type, size, mode and modification time. */
export async function fingerprint(dir: string): Promise<string> {
  const hash = createHash('sha256');
  const walk = async (relative: string): Promise<void> => {
    const entries = await readdir(join(dir, relative), { withFileTypes: true }).catch(() => []);
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const path = join(relative, entry.name);
      const stats = await lstat(join(dir, path)).catch(() => undefined);
      hash.update(`${path}\0${stats ? `${stats.mode}:${stats.size}:${stats.mtimeMs}` : 'gone'}\n`);
      if (entry.isDirectory()) await walk(path);
    }
  };
  await walk('');
  return hash.digest('hex');
}

/** How a fresh environment's working directory was filled from the invocation's snapshot. */
export type Restored = Extract<SandboxResult['workspace'], 'new' | 'restored' | 'lost'>;

/** Fills `dir` (empty) from the snapshot at `url`: `new` when there is none yet, `lost` when it outgrew the bound. */
export async function restoreSnapshot(dir: string, url: string): Promise<Restored> {
  const response = await fetch(url, { signal: AbortSignal.timeout(TRANSFER_TIMEOUT_MS) });
  if (response.status === 404) return 'new';
  if (!response.ok) throw new Error(`the workspace could not be restored: its snapshot answered HTTP ${response.status}`);
  const body = Buffer.from(await response.arrayBuffer());
  if (body.length === 0) return 'lost';
  await pipeline(Readable.from([body]), extract({ cwd: dir, gzip: true }));
  return 'restored';
}

/** Archives `dir` and stores it at `url`; a workspace over the bound stores the empty marker instead. */
export async function saveSnapshot(dir: string, url: string): Promise<NonNullable<SandboxResult['snapshot']>> {
  let archive: Buffer | undefined;
  try {
    archive = await compressed(dir);
  } catch (error) {
    return { status: 'failed', error: `the working directory could not be archived: ${(error as Error).message}` };
  }
  const response = await fetch(url, {
    method: 'PUT',
    body: archive ?? Buffer.alloc(0),
    headers: { 'content-type': 'application/gzip' },
    signal: AbortSignal.timeout(TRANSFER_TIMEOUT_MS),
  }).catch((error: unknown) => ({ ok: false, status: 0, statusText: (error as Error).message }) as const);
  if (!response.ok) return { status: 'failed', error: `the snapshot could not be stored (${response.status || response.statusText})` };
  return archive ? { status: 'saved', bytes: archive.length } : { status: 'too_large' };
}

/** The gzipped tar of `dir`, or undefined as soon as it grows past the bound. */
async function compressed(dir: string): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  const stream = create({ cwd: dir, gzip: true, portable: true }, ['.']);
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_SNAPSHOT_BYTES) {
      (stream as unknown as { destroy?: () => void }).destroy?.();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
