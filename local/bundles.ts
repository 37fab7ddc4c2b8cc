/**
 * The local cloud's Lambda code: each function's esbuild bundle, built with the options
 * CDK's NodejsFunction deploys it with (`lib/bundling.ts`), so what runs locally and in the
 * tests is what ships. Bundles are cached by a content hash of everything that went into
 * them (every input file, the options, esbuild's version) under
 * `node_modules/.cache/agent-sessions/bundles`: a start with nothing changed builds nothing.
 * Several clouds may build at once (parallel tests): each writes a new directory and
 * renames it into place, so none ever reads a half-written bundle.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, version as esbuildVersion } from 'esbuild';
import { BUNDLE_FILE, bundling, esbuildOptions, sandboxBundling, type BundlingSettings } from '../lib/bundling';

const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));
const CACHE_DIR = join(PROJECT_ROOT, 'node_modules', '.cache', 'agent-sessions', 'bundles');

/** A function the local cloud runs in its Lambda stand-ins: its name and entry module. */
export interface FunctionSource {
  name: string;
  /** Relative to the project root, as CDK's `entry`. */
  entry: string;
  settings?: BundlingSettings;
}

/** The functions that run in local Lambda execution environments, as CDK deploys them. */
export const LOCAL_FUNCTIONS = {
  runSteps: { name: 'run-steps', entry: 'functions/workflow/run-steps.ts' },
  settleAttempt: { name: 'settle-attempt', entry: 'functions/workflow/settle-attempt.ts' },
  recordOutcome: { name: 'record-outcome', entry: 'functions/workflow/record-outcome.ts' },
  settleExecution: { name: 'settle-execution', entry: 'functions/workflow/settle-execution.ts' },
  deliver: { name: 'deliver', entry: 'functions/workflow/deliver.ts' },
  sandbox: { name: 'sandbox', entry: 'functions/sandbox/run-command.ts', settings: sandboxBundling },
} satisfies Record<string, FunctionSource>;

/** The local execution environments' runner (`lambda-runner.ts`), bundled the same way so it starts on plain Node. */
export const RUNNER: FunctionSource = { name: 'lambda-runner', entry: 'local/lambda-runner.ts' };

interface Manifest {
  hash: string;
  /** Input files relative to the project root, as the last build's metafile listed them. */
  inputs: string[];
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** Digests of files by path, read once per check: the functions share most of their inputs. */
type FileDigests = Map<string, Promise<string | undefined>>;

function digestOf(input: string, digests: FileDigests): Promise<string | undefined> {
  let digest = digests.get(input);
  if (!digest) {
    digest = readFile(join(PROJECT_ROOT, input)).then(sha256, () => undefined);
    digests.set(input, digest);
  }
  return digest;
}

/** The content hash of a build: its options, esbuild's version, and every input file's bytes; undefined when an input is gone. */
async function contentHash(source: FunctionSource, inputs: string[], digests: FileDigests): Promise<string | undefined> {
  const hash = createHash('sha256');
  hash.update(JSON.stringify({ esbuild: esbuildVersion, entry: source.entry, settings: source.settings ?? bundling }));
  const sorted = [...inputs].sort();
  const each = await Promise.all(sorted.map((input) => digestOf(input, digests)));
  for (const [i, digest] of each.entries()) {
    if (digest === undefined) return undefined;
    hash.update(`\0${sorted[i]}\0${digest}`);
  }
  return hash.digest('hex');
}

const bundleDir = (source: FunctionSource, hash: string) => join(CACHE_DIR, `${source.name}-${hash.slice(0, 16)}`);
const manifestFile = (source: FunctionSource) => join(CACHE_DIR, `${source.name}.json`);

async function readManifest(source: FunctionSource): Promise<Manifest | undefined> {
  try {
    return JSON.parse(await readFile(manifestFile(source), 'utf8')) as Manifest;
  } catch {
    return undefined;
  }
}

/** Writes a file so that readers see the old or the new content, never a part. */
async function writeAtomically(file: string, content: string): Promise<void> {
  const temporary = `${file}.${randomBytes(6).toString('hex')}`;
  await writeFile(temporary, content);
  await rename(temporary, file);
}

/** Builds the bundle into a fresh directory and moves it into place under its content hash. */
async function buildBundle(source: FunctionSource, digests: FileDigests): Promise<string> {
  const staging = join(CACHE_DIR, `.build-${source.name}-${randomBytes(6).toString('hex')}`);
  try {
    const result = await build({
      ...esbuildOptions(resolve(PROJECT_ROOT, source.entry), staging, source.settings),
      absWorkingDir: PROJECT_ROOT,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs).map((input) => relative(PROJECT_ROOT, resolve(PROJECT_ROOT, input)));
    const hash = await contentHash(source, inputs, digests);
    if (!hash) throw new Error(`an input of ${source.entry} vanished while it was bundled`);
    const target = bundleDir(source, hash);
    try {
      await rename(staging, target);
    } catch (error) {
      // Another cloud built the same content first: theirs is as good.
      if (!['ENOTEMPTY', 'EEXIST'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
    }
    await writeAtomically(manifestFile(source), JSON.stringify({ hash, inputs } satisfies Manifest));
    return join(target, BUNDLE_FILE);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** The path of a function's current bundle: from the cache when nothing it was built from changed, else built now. */
export async function bundleOf(source: FunctionSource, digests: FileDigests = new Map()): Promise<string> {
  await mkdir(CACHE_DIR, { recursive: true });
  const manifest = await readManifest(source);
  if (manifest && (await contentHash(source, manifest.inputs, digests)) === manifest.hash) {
    const cached = join(bundleDir(source, manifest.hash), BUNDLE_FILE);
    const present = await readFile(cached).then(() => true, () => false);
    if (present) return cached;
  }
  return buildBundle(source, digests);
}

/** Bundles of several functions at once, by name. */
export async function bundlesOf(sources: readonly FunctionSource[]): Promise<Map<string, string>> {
  const digests: FileDigests = new Map();
  const paths = await Promise.all(sources.map(async (source) => [source.name, await bundleOf(source, digests)] as const));
  return new Map(paths);
}
