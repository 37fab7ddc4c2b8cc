/**
 * The route table: the single source of every HTTP route. CDK creates one API route and
 * one Lambda function per entry, the local gateway routes from it, and the OpenAPI
 * document is generated from it.
 */

/** What a route's function may touch; CDK turns each entry into least-privilege IAM. */
export type Access =
  | 'table:read'
  | 'table:write'
  | 'payloads:read'
  | 'payloads:write'
  | 'secrets:read'
  | 'secrets:write'
  | 'workflow:start'
  | 'workflow:stop'
  /** Starts executions of the delivery state machine: whoever records an outcome announces it. */
  | 'deliveries:start'
  /** Signs and verifies list cursors with the deployment's cursor key. */
  | 'cursors';

/**
 * Who may call a route: `none` (public), `principal` (a user bearer token or an
 * organization API key), `user` (a user bearer token only; an API key gets 401).
 */
export type RouteAuth = 'none' | 'principal' | 'user';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface Route {
  method: Method;
  /** API Gateway path template, e.g. `/tokens/{id}`. */
  path: string;
  /** Module under `functions/handlers/` exporting `handler`. */
  handler: string;
  auth: RouteAuth;
  access: readonly Access[];
  /** Function timeout; API Gateway answers within ~29 s whatever this says. */
  timeoutSeconds?: number;
}

// Authentication reads users, keys and invites and may redeem an invite or stamp a
// key's last use, so every authenticated route writes the table.
const authenticated = ['table:read', 'table:write'] as const satisfies readonly Access[];

export const routes = [
  { method: 'GET', path: '/health', handler: 'get-health', auth: 'none', access: ['table:read', 'payloads:read'] },
  { method: 'GET', path: '/whoami', handler: 'get-whoami', auth: 'principal', access: authenticated },
  { method: 'GET', path: '/models', handler: 'list-models', auth: 'principal', access: authenticated },
  { method: 'POST', path: '/invites', handler: 'create-invite', auth: 'user', access: authenticated },
  { method: 'GET', path: '/tokens', handler: 'list-tokens', auth: 'user', access: authenticated },
  { method: 'POST', path: '/tokens', handler: 'create-token', auth: 'user', access: authenticated },
  { method: 'GET', path: '/tokens/{id}', handler: 'get-token', auth: 'user', access: authenticated },
  { method: 'DELETE', path: '/tokens/{id}', handler: 'delete-token', auth: 'user', access: authenticated },
  { method: 'GET', path: '/secrets', handler: 'list-secrets', auth: 'principal', access: authenticated },
  { method: 'POST', path: '/secrets', handler: 'create-secret', auth: 'principal', access: [...authenticated, 'secrets:write'] },
  { method: 'GET', path: '/secrets/{name}', handler: 'get-secret', auth: 'principal', access: authenticated },
  { method: 'PUT', path: '/secrets/{name}', handler: 'update-secret', auth: 'principal', access: [...authenticated, 'secrets:write'] },
  { method: 'DELETE', path: '/secrets/{name}', handler: 'delete-secret', auth: 'principal', access: [...authenticated, 'secrets:write'] },
  { method: 'GET', path: '/sessions', handler: 'list-sessions', auth: 'principal', access: [...authenticated, 'cursors'] },
  { method: 'GET', path: '/sessions/{id}/audit', handler: 'get-audit', auth: 'principal', access: [...authenticated, 'cursors'] },
  // Deleting stops a running execution and removes the invocations' payloads and checkpoints.
  { method: 'DELETE', path: '/sessions/{id}', handler: 'delete-session', auth: 'principal', access: [...authenticated, 'payloads:write', 'workflow:stop', 'deliveries:start'], timeoutSeconds: 30 },
  // Waits are served in slices (WAIT_SLICE_SECONDS) below API Gateway's ~29 s.
  // A run whose execution cannot start is recorded failed there, and announced.
  { method: 'POST', path: '/sessions/{id}', handler: 'run-session', auth: 'principal', access: [...authenticated, 'workflow:start', 'deliveries:start'], timeoutSeconds: 30 },
  { method: 'GET', path: '/sessions/{id}', handler: 'get-session', auth: 'principal', access: authenticated },
  { method: 'GET', path: '/traces', handler: 'list-traces', auth: 'principal', access: [...authenticated, 'cursors'] },
  // Reads span payloads from the bucket; never writes them.
  { method: 'GET', path: '/traces/{invocation_key}', handler: 'get-trace', auth: 'principal', access: [...authenticated, 'payloads:read', 'cursors'] },
  // One span with its payloads, read from the bucket.
  { method: 'GET', path: '/traces/{invocation_key}/spans/{span_id}', handler: 'get-trace-span', auth: 'principal', access: [...authenticated, 'payloads:read'] },
  // Long-polls up to 20 s (wait_seconds), well below API Gateway's ~29 s.
  { method: 'GET', path: '/traces/{invocation_key}/events', handler: 'get-trace-events', auth: 'principal', access: [...authenticated, 'cursors'], timeoutSeconds: 30 },
  // Records the outcome, announces it, then stops the execution.
  { method: 'POST', path: '/traces/{invocation_key}/cancel', handler: 'cancel-trace', auth: 'principal', access: [...authenticated, 'workflow:stop', 'deliveries:start'] },
  { method: 'GET', path: '/memories', handler: 'list-memories', auth: 'principal', access: [...authenticated, 'cursors'] },
  { method: 'DELETE', path: '/memories/{id}', handler: 'delete-memory', auth: 'principal', access: authenticated },
  // A large group is deleted in batches of 25.
  { method: 'DELETE', path: '/memories', handler: 'delete-memories', auth: 'principal', access: authenticated, timeoutSeconds: 30 },
  { method: 'GET', path: '/agents', handler: 'list-agents', auth: 'principal', access: authenticated },
  { method: 'GET', path: '/agents/{name}', handler: 'get-agent', auth: 'principal', access: authenticated },
  { method: 'GET', path: '/agents/{name}/revisions/{revision}', handler: 'get-revision', auth: 'principal', access: authenticated },
  // The signing secret is generated and kept with the secret values.
  { method: 'POST', path: '/webhooks', handler: 'create-webhook', auth: 'principal', access: [...authenticated, 'secrets:write'] },
  { method: 'GET', path: '/webhooks', handler: 'list-webhooks', auth: 'principal', access: authenticated },
  { method: 'GET', path: '/webhooks/{id}', handler: 'get-webhook', auth: 'principal', access: authenticated },
  { method: 'DELETE', path: '/webhooks/{id}', handler: 'delete-webhook', auth: 'principal', access: [...authenticated, 'secrets:write'] },
  { method: 'GET', path: '/webhooks/{id}/deliveries', handler: 'list-deliveries', auth: 'principal', access: [...authenticated, 'cursors'] },
  { method: 'PUT', path: '/integrations/otlp', handler: 'put-otlp', auth: 'principal', access: authenticated },
  { method: 'GET', path: '/integrations/otlp', handler: 'get-otlp', auth: 'principal', access: authenticated },
  { method: 'DELETE', path: '/integrations/otlp', handler: 'delete-otlp', auth: 'principal', access: authenticated },
  // The document is built from the contracts in the function itself: it touches nothing.
  { method: 'GET', path: '/openapi.json', handler: 'get-openapi', auth: 'none', access: [] },
] as const satisfies readonly Route[];

type Routes = (typeof routes)[number];
type KeyOf<R> = R extends { method: infer M extends string; path: infer P extends string } ? `${M} ${P}` : never;
type RouteFor<K, R = Routes> = R extends Routes ? (KeyOf<R> extends K ? R : never) : never;

/** `METHOD /path` of every route. */
export type RouteKey = KeyOf<Routes>;

/** The route entry for `METHOD /path`; handlers use it to learn their own auth mode. */
export function routeOf<K extends RouteKey>(key: K): RouteFor<K> {
  const route = routes.find((r) => `${r.method} ${r.path}` === key);
  if (!route) throw new Error(`no route ${key}`);
  return route as RouteFor<K>;
}
