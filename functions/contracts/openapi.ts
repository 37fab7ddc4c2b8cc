/** GET /openapi.json: this service's OpenAPI 3.1 document. */
import { z } from 'zod';
import { routeOf } from '#functions/routes';
import { defineOperation } from './operation';

/** An OpenAPI 3.1 document, as JSON. */
export const OpenApiDocument = z.record(z.string(), z.unknown());

const CachingHeaders = {
  ETag: { description: "The document's version, for `If-None-Match`.", schema: z.string() },
  'Cache-Control': { description: 'How long a cache may reuse the document.', schema: z.string() },
};

export const getOpenApiOperation = defineOperation({
  route: routeOf('GET /openapi.json'),
  tag: 'Service',
  summary: "Read this service's OpenAPI 3.1 document",
  description: 'Needs no credential. Generated from the route table and the zod contracts the handlers validate with. Cacheable: send its `ETag` back as `If-None-Match` to get 304 while it is unchanged.',
  input: { headers: z.object({ 'if-none-match': z.string().max(1024).optional() }) },
  responses: {
    200: {
      description: 'The document.',
      body: OpenApiDocument,
      headers: CachingHeaders,
    },
    304: {
      description: 'Not modified: the document is the one `If-None-Match` named.',
      headers: CachingHeaders,
    },
  },
  errors: [],
});
