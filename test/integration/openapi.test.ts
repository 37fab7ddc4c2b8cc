import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { newOrganization, request, type Response } from './support';

type Json = Record<string, any>;

const checkedIn: Json = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8'));

describe('GET /openapi.json', () => {
  it('answers the checked-in document without credentials, cacheable', async () => {
    const res = await request('GET', '/openapi.json');

    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('application/json');
    expect(res.headers['cache-control']).toMatch(/max-age=\d+/);
    expect(res.headers.etag).toMatch(/^"[0-9a-f]+"$/);
    expect(res.body).toEqual(checkedIn);
  });

  it('answers 304 without a body to a request naming its ETag, and the document to one naming another', async () => {
    const { headers } = await request('GET', '/openapi.json');

    const unchanged = await request('GET', '/openapi.json', { headers: { 'if-none-match': `W/${headers.etag}` } });
    const changed = await request('GET', '/openapi.json', { headers: { 'if-none-match': '"0000"' } });

    expect(unchanged.status).toBe(304);
    expect(unchanged.body).toBeNull();
    expect(unchanged.headers.etag).toBe(headers.etag);
    expect(changed.status).toBe(200);
    expect(changed.body).toEqual(checkedIn);
  });
});

describe('the document describes what the service answers', () => {
  const root = 'https://openapi.invalid/document';
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats.default(ajv);
  const localize = (schema: unknown) => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${root}#/$defs/`));
  ajv.addSchema(localize({ $id: root, $defs: checkedIn.components.schemas }));

  /** Asserts that `res` is a response the document lists for `route`, with a body of its schema. */
  function expectDocumented(route: string, res: Response) {
    const [method, path] = route.split(' ') as [string, string];
    const listed = checkedIn.paths[path]?.[method.toLowerCase()]?.responses?.[String(res.status)];
    expect(listed, `${route} ${res.status} is not in the document`).toBeDefined();
    const response = listed.$ref ? checkedIn.components.responses[listed.$ref.split('/').at(-1)] : listed;
    const schema = response.content?.['application/json']?.schema;
    if (!schema) {
      expect(res.body, `${route} ${res.status} has no body in the document`).toBeNull();
      return;
    }
    const validate = ajv.compile(localize(schema));
    expect(validate(res.body), `${route} ${res.status}: ${JSON.stringify(validate.errors)}`).toBe(true);
  }

  let token: string;

  beforeAll(async () => {
    ({ token } = await newOrganization());
  });

  it('for identity, models, secrets and tokens', async () => {
    expectDocumented('GET /health', await request('GET', '/health'));
    expectDocumented('GET /whoami', await request('GET', '/whoami', { token }));
    expectDocumented('GET /models', await request('GET', '/models', { token }));

    expectDocumented('POST /secrets', await request('POST', '/secrets', { token, body: { name: 'OPENAPI_KEY', value: 'sk-abcdefghijklmnop' } }));
    expectDocumented('GET /secrets', await request('GET', '/secrets', { token }));
    expectDocumented('PUT /secrets/{name}', await request('PUT', '/secrets/OPENAPI_KEY', { token, body: { value: 'rotated-value' } }));
    expectDocumented('GET /secrets/{name}', await request('GET', '/secrets/NO_SUCH', { token }));
    expectDocumented('DELETE /secrets/{name}', await request('DELETE', '/secrets/OPENAPI_KEY', { token }));

    const created = await request('POST', '/tokens', { token, body: { name: 'openapi' } });
    expectDocumented('POST /tokens', created);
    expectDocumented('GET /tokens', await request('GET', '/tokens', { token }));
    expectDocumented('GET /tokens/{id}', await request('GET', `/tokens/${created.body.id}`, { token }));
    expectDocumented('GET /whoami', await request('GET', '/whoami', { token: created.body.key }));
    expectDocumented('GET /tokens', await request('GET', '/tokens', { token: created.body.key }));
    expectDocumented('DELETE /tokens/{id}', await request('DELETE', `/tokens/${created.body.id}`, { token }));
  });

  it('for sessions, traces, agents and memories, and for bad input and missing credentials', async () => {
    expectDocumented('GET /sessions', await request('GET', '/sessions', { token }));
    expectDocumented('GET /sessions/{id}', await request('GET', '/sessions/no-such-session', { token }));
    expectDocumented('GET /sessions/{id}', await request('GET', '/sessions/no-such-session?limit=0', { token }));
    expectDocumented('GET /traces', await request('GET', '/traces', { token }));
    expectDocumented('GET /traces/{invocation_key}', await request('GET', '/traces/no-such-key', { token }));
    expectDocumented('GET /agents', await request('GET', '/agents', { token }));
    expectDocumented('GET /agents/{name}', await request('GET', '/agents/nobody', { token }));
    expectDocumented('GET /memories', await request('GET', '/memories?group=openapi', { token }));
    expectDocumented('DELETE /memories', await request('DELETE', '/memories?group=openapi', { token }));
    expectDocumented('GET /secrets', await request('GET', '/secrets'));
    expectDocumented('POST /sessions/{id}', await request('POST', '/sessions/x', { token, body: {} }));
  });
});
