/**
 * `npm run openapi`: regenerates `openapi.json` at the repository root from the route table
 * and the zod contracts. `npm run openapi -- --check` writes nothing and exits 1 when the
 * checked-in file is stale (the unit tests check the same, so CI does).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument } from '#functions/openapi/document';

const target = fileURLToPath(new URL('../openapi.json', import.meta.url));
const args = process.argv.slice(2);
if (args.some((arg) => arg !== '--check')) {
  process.stderr.write('usage: npm run openapi [-- --check]\n');
  process.exit(2);
}

const text = `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;
if (args.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    // A missing file is as stale as a different one.
  }
  if (current !== text) {
    process.stderr.write('openapi.json is stale: run `npm run openapi` and commit the result\n');
    process.exit(1);
  }
  process.stdout.write('openapi.json is up to date\n');
} else {
  writeFileSync(target, text);
  process.stdout.write(`wrote ${target}\n`);
}
