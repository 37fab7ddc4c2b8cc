/** GET /openapi.json: the OpenAPI 3.1 document, with an ETag so clients and caches can revalidate. */
import { createHash } from 'node:crypto';
import { getOpenApiOperation } from '#contracts/openapi';
import { defineHandler } from '#http/handler';
import { buildOpenApiDocument } from '#functions/openapi/document';

// The document only changes with a deployment, so a cache may keep it for a while.
const CACHE_CONTROL = 'public, max-age=300';

let served: { document: Record<string, unknown>; etag: string } | undefined;

/** The document and its ETag, built once per function instance. */
function current() {
  if (!served) {
    const document = buildOpenApiDocument();
    served = { document, etag: `"${createHash('sha256').update(JSON.stringify(document)).digest('hex').slice(0, 32)}"` };
  }
  return served;
}

/** Whether an `If-None-Match` value names `etag` (weak comparison, as RFC 9110 asks for GET). */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const candidate = tag.trim();
    return candidate === '*' || candidate.replace(/^W\//, '') === etag;
  });
}

export const handler = defineHandler(getOpenApiOperation, async ({ headers }) => {
  const { document, etag } = current();
  const caching = { etag, 'cache-control': CACHE_CONTROL };
  if (matches(headers['if-none-match'], etag)) return { status: 304, headers: caching };
  return { status: 200, body: document, headers: caching };
});
