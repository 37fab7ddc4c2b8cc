/**
 * The typed client of the Agent Session Service:
 *
 *   const client = new AgentSessions({ baseUrl, token });
 *   const { message, invocation_key } = await client.sessions.run('s1', { user_prompt, agent_name, agent });
 *   for await (const span of client.traces.get(invocation_key)) ...
 *   for await (const event of client.traces.events(invocation_key)) ...  // live, until invocation_ended
 *   const { secret } = await client.webhooks.create({ url });             // shown only here
 */
import { Transport, type ClientOptions, type RequestOptions } from './core';
import { Agents } from './resources/agents';
import { Integrations } from './resources/integrations';
import { Invites } from './resources/invites';
import { Memories } from './resources/memories';
import { Models } from './resources/models';
import { Secrets } from './resources/secrets';
import { Sessions } from './resources/sessions';
import { Tokens } from './resources/tokens';
import { Traces } from './resources/traces';
import { Webhooks } from './resources/webhooks';
import type { HealthResponse, LocalSignInResponse, WhoamiResponse } from './types';

export class AgentSessions {
  readonly sessions: Sessions;
  readonly traces: Traces;
  readonly agents: Agents;
  readonly models: Models;
  readonly secrets: Secrets;
  readonly memories: Memories;
  readonly tokens: Tokens;
  readonly invites: Invites;
  readonly webhooks: Webhooks;
  readonly integrations: Integrations;
  private readonly transport: Transport;

  constructor(options: ClientOptions) {
    this.transport = new Transport(options);
    this.sessions = new Sessions(this.transport);
    this.traces = new Traces(this.transport);
    this.agents = new Agents(this.transport);
    this.models = new Models(this.transport);
    this.secrets = new Secrets(this.transport);
    this.memories = new Memories(this.transport);
    this.tokens = new Tokens(this.transport);
    this.invites = new Invites(this.transport);
    this.webhooks = new Webhooks(this.transport);
    this.integrations = new Integrations(this.transport);
  }

  get baseUrl(): string {
    return this.transport.baseUrl;
  }

  /** What the credential authenticates: a user or an organization API key. */
  async whoami(options: RequestOptions = {}): Promise<WhoamiResponse> {
    return this.transport.get<WhoamiResponse>({ path: '/whoami' }, options);
  }

  /** The health check (no credential needed); a 503 throws `ServiceUnavailableError`. */
  async health(options: RequestOptions = {}): Promise<HealthResponse> {
    return this.transport.get<HealthResponse>({ path: '/health', authenticated: false }, options);
  }

  /**
   * The local service's sign-in (`npm start` only; on AWS sign-in is Cognito's): a user
   * bearer token for `email`. Signing in twice is harmless, so it is retried like a read.
   */
  async localSignIn(params: { email: string }, options: RequestOptions = {}): Promise<LocalSignInResponse> {
    const spec = { path: '/local/sign-in', body: JSON.stringify(params), retry: 'idempotent', authenticated: false } as const;
    return this.transport.post<LocalSignInResponse>(spec, options);
  }
}

export { path, retryDecision, type ClientOptions, type RequestOptions, type RetryMode } from './core';
export * from './errors';
export { PagePromise } from './pagination';
export { EventStream } from './streaming';
export type * from './types';
