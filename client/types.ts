/**
 * The client's types, derived from the service's own zod contracts (type-only imports:
 * the client needs no zod at run time). Param types are named `<Resource><Verb>Params`.
 */
import type { z } from 'zod';
import type * as agent from '#contracts/agent';
import type * as agents from '#contracts/agents';
import type * as identity from '#contracts/identity';
import type * as memories from '#contracts/memories';
import type * as outbound from '#contracts/outbound';
import type * as secrets from '#contracts/secrets';
import type * as sessions from '#contracts/sessions';
import type * as tokens from '#contracts/tokens';
import type * as traces from '#contracts/traces';

export type AgentConfig = z.input<typeof agent.AgentConfig>;

export type Session = z.infer<typeof sessions.Session>;
export type Message = z.infer<typeof sessions.Message>;
export type AuditEvent = z.infer<typeof sessions.AuditEvent>;
export type SessionGetResponse = z.infer<typeof sessions.GetSessionResponse>;
export type SessionListResponse = z.infer<typeof sessions.ListSessionsResponse>;
export type SessionAuditResponse = z.infer<typeof sessions.GetAuditResponse>;
/** The run's answer plus the invocation key it ran under (the one sent, or the one the client made). */
export type SessionRunResponse = z.infer<typeof sessions.RunSessionResponse> & { invocation_key: string };

export interface SessionRunParams extends z.input<typeof sessions.RunSessionBody> {
  /** Seconds to wait for the answer, 0 to 1800 (default 1800); 0 returns once accepted. */
  wait_timeout_seconds?: number;
  /** The invocation key; the client makes one when omitted, so its own re-sends stay safe. */
  idempotency_key?: string;
}

export interface SessionGetParams {
  /** The `next_cursor` of the previous page (a message's `cursor`). */
  after?: string;
  /** 1 to 1000 messages per page (service default 100). */
  limit?: number;
}

export interface SessionListParams {
  after?: string;
  /** 1 to 1000 (service default 100). */
  limit?: number;
}

export type SessionAuditParams = SessionListParams;

/** Tokens used, summed over every attempt (zero while nothing was used). */
export interface TraceUsage {
  input_tokens: number;
  output_tokens: number;
}

/** What an invocation summary says it used: tokens, and their cost when the catalogue prices the model. */
export interface TraceCost {
  usage: TraceUsage;
  /** USD so far (while it runs); absent when the model is not priced. */
  cost_usd?: number;
}

export type TraceSummary = z.infer<typeof traces.TraceSummary> & TraceCost;
export type Span = z.infer<typeof traces.Span>;
export type Attempt = z.infer<typeof traces.Attempt>;
export type TraceGetResponse = z.infer<typeof traces.GetTraceResponse> & TraceCost;
export type TraceListResponse = Omit<z.infer<typeof traces.ListTracesResponse>, 'traces'> & { traces: TraceSummary[] };
/** The answer to a cancel: the invocation summary with its `failure` (`interrupted`, a message starting with `cancelled`). */
export type TraceCancelResponse = z.infer<typeof traces.CancelTraceResponse> & TraceCost;

/** One thing that happened in an invocation; the client yields only the types it knows. */
export type TraceEvent = z.infer<typeof traces.TraceEvent>;
/** The last event of every invocation: its outcome, and the assistant message when it succeeded. */
export type InvocationEndedEvent = Extract<TraceEvent, { type: 'invocation_ended' }>;
export type TraceEventsResponse = z.infer<typeof traces.TraceEventsResponse>;

export interface TraceEventsParams {
  /** Resume after this cursor (a page's `next_cursor`, or a stream's `cursor`); default the first event. */
  after?: string;
  /** With `after`: skip events up to this `seq` (a stream's `lastSeq`), to resume exactly where iteration stopped mid-page. */
  last_seq?: number;
  /** 1 to 500 events per page (service default 100). */
  limit?: number;
  /** 0 to 20 seconds the service holds a request while nothing new happened (default 20 here); 0 polls every second. */
  wait_seconds?: number;
}

export interface TraceGetParams {
  /** Default true; false leaves out `input`/`output` and allows up to 500 spans a page. */
  payloads?: boolean;
  /** `final` (default): the latest attempt's spans; `all`: earlier attempts' too, marked `superseded`. */
  attempts?: 'final' | 'all';
  after?: string;
  /** With payloads 1 to 25 (default 25), without 1 to 500 (default 500). */
  limit?: number;
}

export type TraceListParams = Partial<z.output<typeof traces.ListTracesQuery>>;

export type AgentSummary = z.infer<typeof agents.AgentSummary>;
export type AgentDetail = z.infer<typeof agents.AgentDetail>;
export type AgentRevision = z.infer<typeof agents.AgentRevision>;
export type AgentListResponse = z.infer<typeof agents.AgentsResponse>;

export type Model = z.infer<typeof identity.Model>;
export type ModelListResponse = z.infer<typeof identity.ModelsResponse>;
export type WhoamiResponse = z.infer<typeof identity.WhoamiResponse>;
export type HealthResponse = z.infer<typeof identity.HealthResponse>;
export type Invite = z.infer<typeof identity.InviteResponse>;

export interface InviteCreateParams extends z.input<typeof identity.CreateInviteBody> {
  /** Makes the invite safe to re-send; the client makes one when omitted. */
  idempotency_key?: string;
}

export type Secret = z.infer<typeof secrets.Secret>;
export type SecretListResponse = z.infer<typeof secrets.SecretsResponse>;
export type SecretCreateParams = z.input<typeof secrets.CreateSecretBody>;
export type SecretUpdateParams = z.input<typeof secrets.UpdateSecretBody>;

export type Memory = z.infer<typeof memories.Memory>;
export type MemoryListResponse = z.infer<typeof memories.ListMemoriesResponse>;

export interface MemoryListParams {
  /** The `memory.group` of the agents sharing the memories. */
  group: string;
  after?: string;
  /** 1 to 1000 (service default 100). */
  limit?: number;
}

export type Token = z.infer<typeof tokens.Token>;
export type CreatedToken = z.infer<typeof tokens.CreatedToken>;
export type TokenListResponse = z.infer<typeof tokens.TokensResponse>;
export type TokenCreateParams = z.input<typeof tokens.CreateTokenBody>;

export interface LocalSignInResponse {
  token: string;
}

/** What a webhook is told of: an invocation's outcome. */
export type WebhookEventType = z.infer<typeof outbound.WebhookEventType>;
/** A webhook as listed: never its signing secret. */
export type Webhook = z.infer<typeof outbound.Webhook>;
/** The answer to a create: the webhook with its signing secret (`whsec_…`), shown only here. */
export type CreatedWebhook = z.infer<typeof outbound.CreatedWebhook>;
export type WebhookListResponse = z.infer<typeof outbound.WebhooksResponse>;
export type WebhookCreateParams = z.input<typeof outbound.CreateWebhookBody>;
/** One try to deliver an event: the receiver's `status_code`, or the `error` when it gave no answer. */
export type WebhookDelivery = z.infer<typeof outbound.DeliveryAttempt>;
/** A page of delivery tries, newest first. */
export type WebhookDeliveriesResponse = z.infer<typeof outbound.DeliveriesResponse>;

export interface WebhookDeliveriesParams {
  after?: string;
  /** 1 to 100 (service default 20). */
  limit?: number;
}

/** Where finished invocations are exported as OTLP traces, as stored (secret references unresolved). */
export type OtlpSettings = z.infer<typeof outbound.OtlpSettings>;
/** `payloads` is false unless given; `headers` values may hold `{{secret:NAME}}` references. */
export type OtlpIntegrationSetParams = z.input<typeof outbound.OtlpSettingsBody>;
