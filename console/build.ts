/**
 * The web console's build: one esbuild bundle of `console/src` (Preact, the typed client)
 * plus its stylesheet and an index.html naming both, written to a directory the local
 * gateway serves and the CDK stack deploys. Builds are cached by a content hash of every
 * input (each file esbuild read, this file, the tsconfig files, esbuild's version) under
 * `node_modules/.cache/agent-sessions/console`, as `local/bundles.ts` caches the
 * functions: a start with nothing changed builds nothing. Builds running at once (parallel
 * tests) each write a fresh directory and rename it into place, so no reader ever sees a
 * half-written one. `config.json` is not part of the build: whoever serves the files
 * writes it (the local gateway per request, the stack at deployment).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, buildSync, version as esbuildVersion, type BuildOptions, type Metafile } from 'esbuild';
import { CONSOLE_BASE_PATH } from './config';

const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Inputs esbuild does not list: this file (the page, the options) and the compiler settings it reads. */
const SETTINGS_FILES = [relative(PROJECT_ROOT, fileURLToPath(import.meta.url)), 'console/tsconfig.json', 'tsconfig.json'];
const ENTRY = 'console/src/main.tsx';

/** Where builds are cached: one directory per content hash, and `manifest.json` naming the latest. */
export const CONSOLE_CACHE_DIR = join(PROJECT_ROOT, 'node_modules', '.cache', 'agent-sessions', 'console');
const MANIFEST = join(CONSOLE_CACHE_DIR, 'manifest.json');

/** The largest the gzipped script may be. */
export const MAX_SCRIPT_GZIP_BYTES = 150 * 1024;

/** A built console. */
export interface ConsoleBuild {
  /** Absolute directory holding `index.html` and `assets/`; its files are served under `/console/`. */
  dir: string;
  /** The content hash of the build's inputs. */
  hash: string;
  /** Every file of the build, relative to `dir` with `/` separators: `index.html`, `assets/app-<hash>.js`, ... */
  files: string[];
  /** The app's script, relative to `dir`. */
  script: string;
}

interface Manifest {
  hash: string;
  /** Input files relative to the project root, as the last build's metafile listed them. */
  inputs: string[];
  files: string[];
  script: string;
}

function options(outdir: string): BuildOptions & { metafile: true } {
  return {
    entryPoints: { app: resolve(PROJECT_ROOT, ENTRY) },
    absWorkingDir: PROJECT_ROOT,
    tsconfig: resolve(PROJECT_ROOT, 'console', 'tsconfig.json'),
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: ['es2022', 'chrome111', 'firefox115', 'safari16.4'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    sourcemap: 'linked',
    sourcesContent: false,
    outdir: join(outdir, 'assets'),
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    metafile: true,
    logLevel: 'silent',
  };
}

/** The page: the stylesheet and the module script by their hashed names, absolute so deep links load them too. */
function indexHtml(script: string, stylesheet: string | undefined): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Agent Sessions</title>
<link rel="icon" href="data:,">
${stylesheet ? `<link rel="stylesheet" href="${CONSOLE_BASE_PATH}${stylesheet}">\n` : ''}<script type="module" src="${CONSOLE_BASE_PATH}${script}"></script>
</head>
<body>
<div id="app"><p class="boot">Loading…</p></div>
<noscript>The Agent Sessions console needs JavaScript.</noscript>
</body>
</html>
`;
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** The content hash of a build from these inputs; undefined when one is gone. */
function contentHash(inputs: string[]): string | undefined {
  const hash = createHash('sha256');
  hash.update(JSON.stringify({ esbuild: esbuildVersion, entry: ENTRY }));
  for (const input of [...new Set([...inputs, ...SETTINGS_FILES])].sort()) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(PROJECT_ROOT, input));
    } catch {
      return undefined;
    }
    hash.update(`\0${input}\0${sha256(bytes)}`);
  }
  return hash.digest('hex');
}

const buildDir = (hash: string) => join(CONSOLE_CACHE_DIR, hash.slice(0, 16));

/** The cached build, when nothing it was built from changed and its files are all there. */
function cached(): ConsoleBuild | undefined {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(MANIFEST, 'utf8')) as Manifest;
  } catch {
    return undefined;
  }
  if (contentHash(manifest.inputs) !== manifest.hash) return undefined;
  const dir = buildDir(manifest.hash);
  try {
    for (const file of manifest.files) readFileSync(join(dir, file));
  } catch {
    return undefined;
  }
  return { dir, hash: manifest.hash, files: manifest.files, script: manifest.script };
}

function staging(): string {
  mkdirSync(CONSOLE_CACHE_DIR, { recursive: true });
  return join(CONSOLE_CACHE_DIR, `.build-${randomBytes(6).toString('hex')}`);
}

/** Writes index.html beside esbuild's output and moves the directory into place under its content hash. */
function finish(dir: string, metafile: Metafile): ConsoleBuild {
  const outputs = Object.keys(metafile.outputs).map((output) => relative(dir, resolve(PROJECT_ROOT, output)).split('\\').join('/'));
  const script = outputs.find((output) => output.endsWith('.js'));
  if (!script) throw new Error('the console build produced no script');
  const stylesheet = outputs.find((output) => output.endsWith('.css'));
  writeFileSync(join(dir, 'index.html'), indexHtml(script, stylesheet));
  const inputs = Object.keys(metafile.inputs).map((input) => relative(PROJECT_ROOT, resolve(PROJECT_ROOT, input)));
  const hash = contentHash(inputs);
  if (!hash) throw new Error('an input of the console vanished while it was built');
  const files = ['index.html', ...outputs];
  const target = buildDir(hash);
  try {
    renameSync(dir, target);
  } catch (error) {
    // Another build of the same content got there first: theirs is as good.
    if (!['ENOTEMPTY', 'EEXIST'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
  }
  const manifest: Manifest = { hash, inputs, files, script };
  const temporary = `${MANIFEST}.${randomBytes(6).toString('hex')}`;
  writeFileSync(temporary, JSON.stringify(manifest));
  renameSync(temporary, MANIFEST);
  return { dir: target, hash, files, script };
}

/** The built console: from the cache when nothing it was built from changed, else built now (about a second). */
export async function buildConsole(): Promise<ConsoleBuild> {
  const hit = cached();
  if (hit) return hit;
  const dir = staging();
  try {
    const result = await build(options(dir));
    return finish(dir, result.metafile);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `buildConsole` for synchronous callers (a CDK construct). */
export function buildConsoleSync(): ConsoleBuild {
  const hit = cached();
  if (hit) return hit;
  const dir = staging();
  try {
    return finish(dir, buildSync(options(dir)).metafile);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every file of a build by its path under `/console/`, read into memory (the whole console is some tens of KiB). */
export function readConsoleFiles(built: ConsoleBuild): Map<string, Buffer> {
  return new Map(built.files.map((file) => [file, readFileSync(join(built.dir, file))]));
}

