/**
 * The OpenAPI 3.1 document, generated from the operations (the route table's routes with
 * the zod contracts their handlers validate with) by zod's own JSON Schema conversion:
 * requests as the schemas accept them (`io: 'input'`), responses as handlers produce them
 * (`io: 'output'`). `npm run openapi` writes it to `openapi.json`; GET /openapi.json serves it.
 */
import { z } from 'zod';
import { AgentConfig } from '#contracts/agent';
import { AgentRevision, AgentSummary } from '#contracts/agents';
import { ErrorBody } from '#contracts/common';
import { InviteResponse, Model } from '#contracts/identity';
import { Memory } from '#contracts/memories';
import type { ErrorStatus, HeaderSpec, InputSchemas, Operation, ResponseSpec } from '#contracts/operation';
import { operations } from '#contracts/operations';
import { Secret } from '#contracts/secrets';
import { AuditEvent, Message, Session } from '#contracts/sessions';
import { Token } from '#contracts/tokens';
import { Attempt, Span, TraceSummary } from '#contracts/traces';
import type { RouteAuth } from '#functions/routes';

type JsonSchema = Record<string, unknown>;
type Json = Record<string, unknown>;

/** The interface description's version (the spec's Versioning section). */
export const API_VERSION = '1.0.0';

/** Shared schemas, written once under `components/schemas` and referenced everywhere else. */
const NAMED: [z.ZodType, string][] = [
  [ErrorBody, 'ErrorBody'],
  [Session, 'Session'],
  [Message, 'Message'],
  [AuditEvent, 'AuditEvent'],
  [AgentConfig, 'AgentConfig'],
  [AgentSummary, 'AgentSummary'],
  [AgentRevision, 'AgentRevision'],
  [TraceSummary, 'TraceSummary'],
  [Span, 'Span'],
  [Attempt, 'Attempt'],
  [Memory, 'Memory'],
  [Secret, 'Secret'],
  [Token, 'Token'],
  [Model, 'Model'],
  [InviteResponse, 'Invite'],
];

const registry = z.registry<{ id: string }>();
for (const [schema, id] of NAMED) registry.add(schema, { id });

const REF_PREFIX = '#/components/schemas/';

/**
 * Keeps a schema's `.describe()` text (the document's registry holds only ids) and trims
 * what zod emits beyond the schema's meaning: the regex it checks `date-time` with
 * (the format says it), the safe-integer bounds of every `z.int()`, and, for responses,
 * `additionalProperties: false` on objects that merely strip unknown keys when parsing
 * (handlers do not parse what they send, and a client must tolerate fields added later).
 */
function tidy(io: 'input' | 'output') {
  return ({ zodSchema, jsonSchema }: { zodSchema: z.core.$ZodTypes; jsonSchema: JsonSchema }) => {
    const description = z.globalRegistry.get(zodSchema)?.description;
    if (description && jsonSchema.description === undefined) jsonSchema.description = description;
    if (jsonSchema.format === 'date-time') delete jsonSchema.pattern;
    if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
    if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
    const def = zodSchema._zod.def;
    if (io === 'output' && def.type === 'object' && def.catchall === undefined) delete jsonSchema.additionalProperties;
  };
}

/** Rewrites zod's `#/$defs/X` references to the document's components. */
function relink(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(relink);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      key,
      key === '$ref' && typeof inner === 'string' ? inner.replace(/^#\/\$defs\//, REF_PREFIX) : relink(inner),
    ]),
  );
}

/** Builds one document; holds the components its schemas collect as they are converted. */
class DocumentBuilder {
  readonly schemas: Record<string, JsonSchema> = {};

  /** The JSON Schema of `schema`, its named parts moved to `components/schemas`. */
  schema(schema: z.ZodType, io: 'input' | 'output', unrepresentable: 'throw' | 'any' = 'throw'): JsonSchema {
    const { $schema: _dialect, $defs, ...root } = z.toJSONSchema(schema, { io, metadata: registry, unrepresentable, override: tidy(io) });
    for (const [id, definition] of Object.entries($defs ?? {})) this.component(id, relink(definition) as JsonSchema);
    return relink(root) as JsonSchema;
  }

  private component(id: string, definition: JsonSchema): void {
    const known = this.schemas[id];
    // A named schema must read the same as a request and as a response, or one name would lie.
    if (known && JSON.stringify(known) !== JSON.stringify(definition)) {
      throw new Error(`components/schemas/${id} differs between requests and responses; name the two forms apart`);
    }
    this.schemas[id] = definition;
  }

  /**
   * Path, query or header parameters from an object schema. A parameter that the handler
   * parses into a number or a boolean is documented as that type with its bounds and default
   * (its text form is what OpenAPI means by them); any other as the string it accepts.
   */
  parameters(schema: z.ZodType | undefined, location: 'path' | 'query' | 'header'): Json[] {
    if (!schema) return [];
    const input = this.schema(schema, 'input');
    const output = this.schema(schema, 'output', 'any');
    const properties = (input.properties ?? {}) as Record<string, JsonSchema>;
    const parsed = (output.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((input.required ?? []) as string[]);
    return Object.entries(properties).map(([name, accepted]) => {
      const typed = parsed[name];
      const documented = typed && ['integer', 'number', 'boolean'].includes(typed.type as string) ? typed : accepted;
      return {
        name: location === 'header' ? headerName(name) : name,
        in: location,
        required: location === 'path' || required.has(name),
        schema: documented,
      };
    });
  }

  operation(operation: Operation): Json {
    const { route, input } = operation;
    const parameters = [
      ...this.parameters(input.params, 'path'),
      ...this.parameters(input.query, 'query'),
      ...this.parameters(input.headers, 'header'),
    ];
    const body = input.body ? { requestBody: { required: true, content: { 'application/json': { schema: this.schema(input.body, 'input') } } } } : {};
    const responses: Json = {};
    for (const [status, response] of Object.entries(operation.responses as Record<string, ResponseSpec>)) {
      responses[status] = this.response(response);
    }
    for (const status of impliedErrors(input, route.auth, operation.errors)) responses[status] = { $ref: `#/components/responses/${ERRORS[status].name}` };
    responses.default = { $ref: '#/components/responses/UnexpectedError' };
    return {
      operationId: camelCase(route.handler),
      tags: [operation.tag],
      summary: operation.summary,
      ...(operation.description ? { description: operation.description } : {}),
      security: SECURITY[route.auth],
      ...(parameters.length ? { parameters } : {}),
      ...body,
      responses,
    };
  }

  private response(response: ResponseSpec): Json {
    const headers: Json = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };
    for (const [name, header] of Object.entries(response.headers ?? {}) as [string, HeaderSpec][]) {
      headers[name] = { description: header.description, schema: this.schema(header.schema, 'output') };
    }
    return {
      description: response.description,
      headers,
      ...(response.body ? { content: { 'application/json': { schema: this.schema(response.body, 'output') } } } : {}),
    };
  }
}

type ImpliedStatus = 400 | 401 | 403 | 503;

/** Every error response of `components/responses`, by status: an `ErrorBody` and what it means. */
const ERRORS: Record<ErrorStatus | ImpliedStatus, { name: string; description: string; headers?: Json }> = {
  400: {
    name: 'BadRequest',
    description:
      'Rejected before anything ran: an invalid path, query, header or body field (the message names it), an invalid or mismatched cursor, or a `limit` above its bound. Do not retry unchanged.',
  },
  401: {
    name: 'Unauthenticated',
    description: 'The credential is missing, malformed, expired or revoked, or of the wrong kind for the route (an API key on /tokens or /invites).',
  },
  403: {
    name: 'Forbidden',
    description: 'The account is not in the private beta (`code` is `not_provisioned`), or only an admin may do this (`code` is `admin_required`).',
  },
  404: { name: 'NotFound', description: 'It does not exist for this organization.' },
  409: {
    name: 'Conflict',
    description: 'The `Idempotency-Key` was already used with a different body (or on another session). Use a new key, or resend the original body byte for byte.',
  },
  423: {
    name: 'Locked',
    description: "Another invocation is running in this session. Retry after it finishes, re-send the running invocation's key to attach, or use another session id.",
  },
  429: { name: 'QuotaExceeded', description: 'The organization has used up its private-beta invocation quota. Contact the service operator.' },
  503: {
    name: 'Unavailable',
    description: 'Something the request needs cannot be reached right now (the sign-in keys, or trace spans). Retry, after `Retry-After` seconds when present.',
    headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 } } },
  },
};

/** The error statuses an operation answers with `ErrorBody`, ascending. */
function impliedErrors(input: InputSchemas, auth: RouteAuth, own: readonly ErrorStatus[]): (ErrorStatus | ImpliedStatus)[] {
  const validates = Object.values(input).some(Boolean);
  const statuses = new Set<ErrorStatus | ImpliedStatus>(own);
  if (validates) statuses.add(400);
  if (auth !== 'none') for (const status of [401, 403, 503] as const) statuses.add(status);
  return [...statuses].sort((a, b) => a - b);
}

const SECURITY: Record<RouteAuth, Json[]> = {
  none: [],
  principal: [{ userToken: [] }, { apiKey: [] }],
  user: [{ userToken: [] }],
};

/** `idempotency-key` -> `Idempotency-Key`: zod contracts name headers as Node lowercases them. */
function headerName(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_match, dash: string, letter: string) => dash + letter.toUpperCase());
}

/** `get-health` -> `getHealth`. */
function camelCase(name: string): string {
  return name.replace(/-([a-z])/g, (_match, letter: string) => letter.toUpperCase());
}

export interface DocumentOptions {
  /** Where clients reach the API; default a `{base_url}` variable set to the local service. */
  servers?: { url: string; description?: string }[];
}

/** The service's OpenAPI 3.1 document. */
export function buildOpenApiDocument(options: DocumentOptions = {}): Json {
  const builder = new DocumentBuilder();
  const paths: Record<string, Json> = {};
  for (const operation of operations) {
    const item = (paths[operation.route.path] ??= {});
    item[operation.route.method.toLowerCase()] = builder.operation(operation);
  }
  const responses = Object.fromEntries(
    Object.values(ERRORS).map(({ name, description, headers }) => [
      name,
      {
        description,
        headers: { 'X-Request-Id': { $ref: '#/components/headers/RequestId' }, ...headers },
        content: { 'application/json': { schema: { $ref: `${REF_PREFIX}ErrorBody` } } },
      },
    ]),
  );
  responses.UnexpectedError = {
    description: 'An unexpected fault (500): the message is generic and `request_id` names the logged detail. Nothing a client sends produces one.',
    headers: { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } },
    content: { 'application/json': { schema: { $ref: `${REF_PREFIX}ErrorBody` } } },
  };
  builder.schema(ErrorBody, 'output');
  const tags = [...new Set(operations.map((operation) => operation.tag))].map((name) => ({ name }));
  return {
    openapi: '3.1.1',
    info: {
      title: 'Agent Session Service',
      version: API_VERSION,
      description:
        'Runs configurable AI agents on behalf of an organization and keeps an exact record of what they did: sessions, traces, audit logs, memories, secrets and API keys. Bodies and responses are JSON; timestamps are ISO 8601. Send credentials as `Authorization: Bearer <credential>`.',
    },
    servers: options.servers ?? [
      {
        url: '{base_url}',
        description: 'The deployment: its API Gateway URL on AWS, or what `npm start` prints.',
        variables: { base_url: { default: 'http://127.0.0.1:3000' } },
      },
    ],
    tags,
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(builder.schemas).sort(([a], [b]) => a.localeCompare(b))),
      responses,
      headers: {
        RequestId: { description: 'Names the request in the service logs.', schema: { type: 'string' } },
      },
      securitySchemes: {
        userToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: "A user bearer token: the ID token of a browser sign-in (Cognito); locally, POST /local/sign-in's `token`.",
        },
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          description: 'An organization API key, minted by POST /tokens. It does not authorize /tokens or /invites.',
        },
      },
    },
  };
}
