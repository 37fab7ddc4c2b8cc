import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { operationKey, operations } from '#contracts/operations';
import { buildOpenApiDocument } from '#functions/openapi/document';
import { routes, type Route } from '#functions/routes';

type Json = Record<string, any>;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const keyOf = (route: Pick<Route, 'method' | 'path'>) => `${route.method} ${route.path}`;

/** Every `[method, path, operation]` of a document. */
function operationsOf(document: Json): [string, string, Json][] {
  return Object.entries(document.paths as Record<string, Json>).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]): [string, string, Json] => [method.toUpperCase(), path, operation]),
  );
}

/** Every value in `value` at a key named `key`, however deep. */
function valuesAt(value: unknown, key: string): unknown[] {
  if (Array.isArray(value)) return value.flatMap((item) => valuesAt(item, key));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([name, inner]) => [...(name === key ? [inner] : []), ...valuesAt(inner, key)]);
}

/** Follows a local JSON pointer (`#/a/b`) through the document. */
function resolve(document: Json, ref: string): unknown {
  return ref
    .slice(2)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<any>((node, part) => (node === undefined ? undefined : node[part]), document);
}

// What the interface spec lists per endpoint (Endpoints, Authentication) plus what
// CONTRACT.md decides (success statuses, POST /invites' 403 and 404).
const SPEC: Record<string, { success: number[]; errors: number[] }> = {
  'GET /health': { success: [200], errors: [503] },
  'GET /whoami': { success: [200], errors: [401, 403] },
  'GET /models': { success: [200], errors: [401] },
  'POST /invites': { success: [201], errors: [400, 401, 403, 404, 409] },
  'GET /tokens': { success: [200], errors: [401] },
  'POST /tokens': { success: [201], errors: [400, 401] },
  'GET /tokens/{id}': { success: [200], errors: [401, 404] },
  'DELETE /tokens/{id}': { success: [204], errors: [401, 404] },
  'GET /secrets': { success: [200], errors: [401] },
  'POST /secrets': { success: [201], errors: [400, 401] },
  'GET /secrets/{name}': { success: [200], errors: [401, 404] },
  'PUT /secrets/{name}': { success: [200], errors: [400, 401, 404] },
  'DELETE /secrets/{name}': { success: [204], errors: [401, 404] },
  'GET /sessions': { success: [200], errors: [401] },
  'GET /sessions/{id}/audit': { success: [200], errors: [400, 401, 404] },
  'DELETE /sessions/{id}': { success: [204], errors: [401, 404] },
  'POST /sessions/{id}': { success: [200, 202], errors: [400, 401, 403, 409, 423, 429, 502, 504] },
  'GET /sessions/{id}': { success: [200], errors: [400, 401, 404] },
  'GET /traces': { success: [200], errors: [400, 401, 404] },
  'GET /traces/{invocation_key}': { success: [200], errors: [400, 401, 404, 503] },
  // Beyond the spec (CONTRACT.md, "Following, stopping and bounding a run").
  'GET /traces/{invocation_key}/events': { success: [200], errors: [400, 401, 404] },
  'GET /traces/{invocation_key}/spans/{span_id}': { success: [200], errors: [400, 401, 404, 503] },
  'POST /traces/{invocation_key}/cancel': { success: [200], errors: [401, 404, 409] },
  'GET /memories': { success: [200], errors: [400, 401] },
  'DELETE /memories/{id}': { success: [204], errors: [400, 401, 404] },
  'DELETE /memories': { success: [204], errors: [400, 401] },
  'GET /agents': { success: [200], errors: [401] },
  'GET /agents/{name}': { success: [200], errors: [401, 404] },
  'GET /agents/{name}/revisions/{revision}': { success: [200], errors: [401, 404] },
  // Beyond the spec (CONTRACT.md, "Sending what happened where users already look").
  'POST /webhooks': { success: [201], errors: [400, 401] },
  'GET /webhooks': { success: [200], errors: [401] },
  'GET /webhooks/{id}': { success: [200], errors: [400, 401, 404] },
  'DELETE /webhooks/{id}': { success: [204], errors: [400, 401, 404] },
  'GET /webhooks/{id}/deliveries': { success: [200], errors: [400, 401, 404] },
  'PUT /integrations/otlp': { success: [200], errors: [400, 401] },
  'GET /integrations/otlp': { success: [200], errors: [401, 404] },
  'DELETE /integrations/otlp': { success: [204], errors: [401] },
  'GET /openapi.json': { success: [200], errors: [] },
};

describe('operations', () => {
  it('are exactly one per route of the route table, each holding its table entry', () => {
    const tableKeys = routes.map(keyOf);
    const operationKeys = operations.map(operationKey);

    expect(new Set(operationKeys).size).toBe(operationKeys.length);
    expect([...operationKeys].sort()).toEqual([...tableKeys].sort());
    for (const operation of operations) {
      expect(routes.find((route) => keyOf(route) === operationKey(operation)), operationKey(operation)).toBe(operation.route);
    }
  });
});

describe('the OpenAPI document', () => {
  let document: Json;

  beforeAll(() => {
    document = buildOpenApiDocument();
  });

  it('validates against the OpenAPI 3.1 schema', async () => {
    const validator = new Validator();

    const result = await validator.validate(structuredClone(document));

    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(document.info.version).toBe('1.0.0');
  });

  it('has every route of the route table, and nothing else', () => {
    const documented = operationsOf(document).map(([method, path]) => `${method} ${path}`);

    expect(documented.sort()).toEqual(routes.map(keyOf).sort());
    for (const route of routes) {
      expect(document.paths[route.path][route.method.toLowerCase()].operationId, keyOf(route)).toBe(
        route.handler.replace(/-([a-z])/g, (_match: string, letter: string) => letter.toUpperCase()),
      );
    }
  });

  it('names unique operation ids', () => {
    const ids = operationsOf(document).map(([, , operation]) => operation.operationId);

    expect(new Set(ids).size).toBe(ids.length);
  });

  it('declares each path template variable as exactly one required path parameter', () => {
    for (const [method, path, operation] of operationsOf(document)) {
      const variables = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
      const declared = (operation.parameters ?? []).filter((parameter: Json) => parameter.in === 'path');

      expect(declared.map((parameter: Json) => parameter.name).sort(), `${method} ${path}`).toEqual(variables.sort());
      for (const parameter of declared) expect(parameter.required, `${method} ${path} ${parameter.name}`).toBe(true);
    }
  });

  it('resolves every $ref inside the document', () => {
    const refs = valuesAt(document, '$ref') as string[];

    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      expect(ref, ref).toMatch(/^#\//);
      expect(resolve(document, ref), ref).toBeDefined();
    }
  });

  it('holds only valid JSON Schema 2020-12 schemas', () => {
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats.default(ajv);
    const root = 'https://openapi.invalid/document';
    const localize = (schema: unknown) =>
      JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${root}#/$defs/`));
    ajv.addSchema(localize({ $id: root, $defs: document.components.schemas }));
    const schemas = valuesAt(document.paths, 'schema');

    expect(schemas.length).toBeGreaterThan(routes.length);
    for (const schema of [...schemas, ...Object.values(document.components.schemas)]) {
      expect(() => ajv.compile(localize(schema)), JSON.stringify(schema).slice(0, 200)).not.toThrow();
    }
  });

  it.each(Object.entries(SPEC))('answers %s with the statuses the spec and the contract list', (key, { success, errors }) => {
    const [method, path] = key.split(' ') as [string, string];
    const operation = document.paths[path]?.[method.toLowerCase()];
    const statuses = Object.keys(operation?.responses ?? {});

    expect(statuses.filter((status) => /^2/.test(status)).map(Number)).toEqual(success);
    expect(statuses).toEqual(expect.arrayContaining(errors.map(String)));
    for (const status of success.filter((code) => code === 204)) expect(operation.responses[status].content, key).toBeUndefined();
  });

  it('lists the spec entry of every route, so the table above keeps up', () => {
    expect(Object.keys(SPEC).sort()).toEqual(routes.map(keyOf).sort());
  });

  it('asks for the credentials the route table says: none, a user token or API key, or a user token only', () => {
    const expected = { none: [], principal: [{ userToken: [] }, { apiKey: [] }], user: [{ userToken: [] }] };
    for (const route of routes) {
      const operation = document.paths[route.path][route.method.toLowerCase()];

      expect(operation.security, keyOf(route)).toEqual(expected[route.auth]);
      expect(Object.keys(operation.responses).includes('401'), keyOf(route)).toBe(route.auth !== 'none');
    }
  });

  it('answers every error with the ErrorBody schema, except the run outcomes, the cancel conflict and the health check that have their own', () => {
    for (const [method, path, operation] of operationsOf(document)) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
        if (!/^[45]|default/.test(status) || (path === '/sessions/{id}' && ['502', '504'].includes(status)) || path === '/health') continue;
        if (path === '/traces/{invocation_key}/cancel' && status === '409') continue;
        const body = (response.$ref ? resolve(document, response.$ref) : response) as Json;

        expect(body.content['application/json'].schema, `${method} ${path} ${status}`).toEqual({ $ref: '#/components/schemas/ErrorBody' });
      }
    }
  });

  it('is what openapi.json holds (run `npm run openapi` after changing a route or a contract)', () => {
    const checkedIn = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8'));

    expect(checkedIn).toEqual(document);
  });
});
