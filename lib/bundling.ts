/**
 * How every function is bundled, in one place: CDK's `NodejsFunction` takes these settings
 * (`lib/service-function.ts`) and the local cloud builds the same bundles with the same
 * esbuild options (`local/bundles.ts`), so what the tests run is what ships. No CDK import
 * here: the local cloud reads this file too.
 */
import type { BuildOptions } from 'esbuild';

/** The settings, as `NodejsFunction`'s bundling properties name them. */
export const bundling = {
  format: 'esm',
  target: 'node22',
  mainFields: ['module', 'main'],
  // Some CommonJS dependencies call `require` for Node built-ins; an ESM bundle has none.
  banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
  minify: true,
  sourceMap: true,
  // Stack traces need the mappings, not a second copy of the sources.
  sourcesContent: false,
  // Bundle the SDK clients instead of relying on the runtime's copy (STYLE.md).
  externalModules: [] as string[],
} as const;

/** The sandbox function's settings: nothing of it is logged, so source maps would serve no stack trace. */
export const sandboxBundling = { ...bundling, sourceMap: false } as const;

/** Bundling settings, the shared ones or the sandbox's. */
export type BundlingSettings = typeof bundling | typeof sandboxBundling;

/** The bundle's file name in its output directory, as `NodejsFunction` names an ESM bundle. */
export const BUNDLE_FILE = 'index.mjs';

/**
 * The esbuild build options equal to the command line `NodejsFunction` runs for these
 * settings (`esbuild --bundle <entry> --target --platform=node --format --outfile --minify
 * --sourcemap --sources-content=false --main-fields --banner:js`), from the project root.
 */
export function esbuildOptions(entry: string, outdir: string, settings: BundlingSettings = bundling): BuildOptions {
  return {
    entryPoints: [entry],
    bundle: true,
    target: settings.target,
    platform: 'node',
    format: settings.format,
    outfile: `${outdir}/${BUNDLE_FILE}`,
    minify: settings.minify,
    sourcemap: settings.sourceMap,
    // esbuild's CLI gets --sources-content=false only with source maps on, as NodejsFunction passes it.
    sourcesContent: settings.sourcesContent,
    external: [...settings.externalModules],
    mainFields: [...settings.mainFields],
    banner: { js: settings.banner },
  };
}
