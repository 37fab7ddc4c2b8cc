/**
 * Helpers for integration tests, which talk HTTP to the local cloud that
 * `global-setup.ts` started. Also the project's setup file: importing it refuses to run
 * unless every endpoint is on 127.0.0.1, and points this worker's own SDK clients (and
 * any service module a test imports) at the emulators.
 */
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';

const LOCAL_HOST = '127.0.0.1';
const REQUIRED_ENDPOINTS = ['AWS_ENDPOINT_URL', 'AWS_ENDPOINT_URL_DYNAMODB', 'AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL_SECRETS_MANAGER'];

/** Throws unless the gateway and every AWS endpoint in `env` are on 127.0.0.1. */
function assertLocal(baseUrl: string | undefined, env: Record<string, string> | undefined): void {
  if (!baseUrl || !env) throw new Error('integration tests need the local cloud of global-setup.ts: run them with vitest');
  const missing = REQUIRED_ENDPOINTS.filter((name) => !env[name]);
  if (missing.length) throw new Error(`integration tests refuse to run: ${missing.join(', ')} not set`);
  const endpoints = { baseUrl, ...Object.fromEntries(Object.entries(env).filter(([name]) => name.startsWith('AWS_ENDPOINT_URL'))) };
  for (const [name, url] of Object.entries(endpoints)) {
    if (new URL(url).hostname !== LOCAL_HOST) {
      throw new Error(`integration tests refuse to run: ${name} is ${url}, not on ${LOCAL_HOST}`);
    }
  }
}

const serviceEnv = inject('serviceEnv');
assertLocal(inject('baseUrl'), serviceEnv);
for (const name of ['AWS_PROFILE', 'AWS_DEFAULT_PROFILE', 'AWS_SESSION_TOKEN']) delete process.env[name];
Object.assign(process.env, serviceEnv);

export interface RequestOptions {
  /** Sent as `Authorization: Bearer <token>` (a user token or an API key). */
  token?: string;
  /** Serialized as JSON with `content-type: application/json`. */
  body?: unknown;
  /** Sent as is (with `content-type: application/json` unless `headers` say otherwise). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  /** Another service than the shared one (a test that starts its own). */
  base?: string;
}

export interface Response<T = any> {
  status: number;
  /** Lowercased names. */
  headers: Record<string, string>;
  /** The parsed JSON body, or null when there is none or it is not JSON. */
  body: T;
}

/** The local cloud's base URL, e.g. `http://127.0.0.1:41234`. */
export function baseUrl(): string {
  return inject('baseUrl');
}

/** Sends one request to the service and parses the JSON answer. */
export async function request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<Response<T>> {
  const headers: Record<string, string> = {};
  const payload = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  if (payload !== undefined) headers['content-type'] = 'application/json';
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  Object.assign(headers, options.headers);

  const response = await fetch(`${options.base ?? baseUrl()}${path}`, { method, headers, body: payload });
  const text = await response.text();
  let body: T = null as T;
  try {
    body = text ? (JSON.parse(text) as T) : body;
  } catch {
    // Not JSON: the test sees null and can look at the status.
  }
  return { status: response.status, headers: Object.fromEntries(response.headers), body };
}

/** A fresh address no other test uses: `<prefix>-<random>@example.test`. */
export function uniqueEmail(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}${randomBytes(4).toString('hex')}@example.test`;
}

/** A user bearer token for `email` from the local sign-in. */
export async function signIn(email: string): Promise<string> {
  const response = await request<{ token: string }>('POST', '/local/sign-in', { body: { email } });
  if (response.status !== 200) throw new Error(`sign-in of ${email} answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body.token;
}

/**
 * A new organization with one admin: the founder `dev@localhost` invites a fresh address
 * into a new organization, which that address then founds at its first request.
 */
export async function newOrganization(): Promise<{ token: string; email: string; organizationId: string }> {
  const founder = await signIn('dev@localhost');
  const email = uniqueEmail('admin');
  const invite = await request('POST', '/invites', { token: founder, body: { email, role: 'admin' } });
  if (invite.status !== 201) throw new Error(`POST /invites answered ${invite.status}: ${JSON.stringify(invite.body)}`);
  const token = await signIn(email);
  // The first authenticated request redeems the invite and creates the organization.
  const whoami = await request('GET', '/whoami', { token });
  if (whoami.status !== 200) throw new Error(`GET /whoami of a new admin answered ${whoami.status}: ${JSON.stringify(whoami.body)}`);
  return { token, email, organizationId: whoami.body.organization_id };
}
