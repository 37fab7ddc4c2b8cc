/**
 * The seams of `functions/`, checked on the source: which folder may import which (README,
 * "Seams"), and no import cycle between files. Type-only imports count too: a cycle of
 * types still ties two modules' meanings together.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const FUNCTIONS = join(ROOT, 'functions');
const aliases = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { imports: Record<string, string> }).imports;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** The file a specifier names, when it is one of the service's own (a `#` alias or a relative path). */
function resolveSpecifier(from: string, specifier: string): string | undefined {
  if (specifier.startsWith('.')) {
    const base = resolve(dirname(from), specifier);
    return [`${base}.ts`, join(base, 'index.ts'), base.replace(/\.js$/, '.ts')].find((path) => {
      try {
        return statSync(path).isFile();
      } catch {
        return false;
      }
    });
  }
  for (const [pattern, target] of Object.entries(aliases)) {
    const prefix = pattern.slice(0, -1); // '#core/*' → '#core/'
    if (specifier.startsWith(prefix)) return join(ROOT, target.replace('*', specifier.slice(prefix.length)));
  }
  return undefined;
}

interface Imports {
  /** The service's files it imports. */
  files: string[];
  /** Every specifier as written. */
  specifiers: string[];
}

const files = sourceFiles(FUNCTIONS);
const graph = new Map<string, Imports>(
  files.map((file) => {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const specifiers = importedFiles.map((imported) => imported.fileName);
    const targets = specifiers.map((specifier) => resolveSpecifier(file, specifier)).filter((target): target is string => target !== undefined);
    return [file, { files: targets, specifiers }];
  }),
);

const inFolder = (folder: string) => [...graph.entries()].filter(([file]) => file.startsWith(join(FUNCTIONS, folder) + '/'));
const name = (file: string) => relative(ROOT, file);

/** Strongly connected components of more than one file (Tarjan), or a file importing itself. */
function cycles(): string[][] {
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string) => {
    order.set(file, index);
    low.set(file, index++);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file)?.files ?? []) {
      if (!graph.has(next)) continue;
      if (!order.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file)!, order.get(next)!));
      }
    }
    if (low.get(file) === order.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(name(member));
      } while (member !== file);
      if (component.length > 1 || graph.get(file)!.files.includes(file)) found.push(component.sort());
    }
  };
  for (const file of graph.keys()) if (!order.has(file)) visit(file);
  return found;
}

describe('the seams of functions/', () => {
  it('finds the files it checks', () => {
    expect(inFolder('core').length).toBeGreaterThan(10);
    expect(inFolder('handlers').length).toBeGreaterThan(10);
  });

  it('core imports neither storage nor an AWS SDK', () => {
    const offending = inFolder('core').flatMap(([file, { specifiers }]) =>
      specifiers.filter((s) => s.startsWith('#data/') || s.startsWith('@aws-sdk/')).map((s) => `${name(file)} → ${s}`),
    );
    expect(offending).toEqual([]);
  });

  it('handlers and workflow tasks take their stores from functions/stores.ts, never from data/', () => {
    const offending = [...inFolder('handlers'), ...inFolder('workflow')].flatMap(([file, { specifiers }]) =>
      specifiers.filter((s) => s.startsWith('#data/')).map((s) => `${name(file)} → ${s}`),
    );
    expect(offending).toEqual([]);
  });

  it('the kit imports nothing of the service; the agent only its domain errors, a leaf', () => {
    const service = /^(#|\.\.?\/)/;
    const kit = inFolder('kit').flatMap(([file, { specifiers }]) =>
      specifiers.filter((s) => service.test(s) && !s.startsWith('./') && !s.startsWith('#kit/')).map((s) => `${name(file)} → ${s}`),
    );
    const agent = inFolder('agent').flatMap(([file, { specifiers }]) =>
      specifiers.filter((s) => /^#(core|data|http)\//.test(s) && s !== '#core/errors').map((s) => `${name(file)} → ${s}`),
    );
    expect([...kit, ...agent]).toEqual([]);
    expect(graph.get(join(FUNCTIONS, 'core/errors.ts'))!.specifiers).toEqual([]);
  });

  it('has no import cycle', () => {
    expect(cycles()).toEqual([]);
  });
});
