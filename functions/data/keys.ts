/**
 * Every key of the single table, declared once. Callers use these builders; no key string
 * appears anywhere else. The README's key schema table documents the same patterns.
 */

type Key = { pk: string; sk: string };

const org = (organizationId: string) => `ORG#${organizationId}`;
const sessionPartition = (organizationId: string, sessionId: string) => `SESSION#${organizationId}#${sessionId}`;
const invocationPartition = (organizationId: string, invocationKey: string) => `INV#${organizationId}#${invocationKey}`;
const pad = (n: number, width: number) => String(n).padStart(width, '0');
// The group is the partition's last part and organization ids hold no `#`, so any group name keeps the key unambiguous.
const memoryPartition = (organizationId: string, group: string) => `MEMORY#${organizationId}#${group}`;
const traces = (organizationId: string) => `TRACES#${organizationId}`;

export const keys = {
  /** An organization: its quota counter and founder. */
  organization: (organizationId: string): Key => ({ pk: org(organizationId), sk: 'ORG' }),

  /** A user, by the identity provider's subject; holds the membership. */
  user: (userId: string): Key => ({ pk: `USER#${userId}`, sk: 'USER' }),

  /** Invites of an email address, oldest first. */
  invitesOf: (email: string) => ({ pk: `INVITE#${email}`, skPrefix: 'INVITE#' }),
  invite: (email: string, createdAt: string, inviteId: string): Key => ({
    pk: `INVITE#${email}`,
    sk: `INVITE#${createdAt}#${inviteId}`,
  }),
  /** An `Idempotency-Key` used on POST /invites within an organization. */
  inviteRequest: (organizationId: string, idempotencyKey: string): Key => ({
    pk: org(organizationId),
    sk: `INVITE_REQUEST#${idempotencyKey}`,
  }),

  /** API keys of an organization, by id. */
  tokensOf: (organizationId: string) => ({ pk: org(organizationId), skPrefix: 'TOKEN#' }),
  token: (organizationId: string, tokenId: string): Key => ({ pk: org(organizationId), sk: `TOKEN#${tokenId}` }),
  /** An API key by the SHA-256 of its value: what authentication reads. */
  apiKey: (keyHash: string): Key => ({ pk: `APIKEY#${keyHash}`, sk: 'APIKEY' }),

  /** Secret metadata of an organization (the value lives in Secrets Manager). */
  secretsOf: (organizationId: string) => ({ pk: org(organizationId), skPrefix: 'SECRET#' }),
  secret: (organizationId: string, name: string): Key => ({ pk: org(organizationId), sk: `SECRET#${name}` }),

  /** A session of an organization: state, lock (current invocation), counters. */
  session: (organizationId: string, sessionId: string): Key => ({ pk: org(organizationId), sk: `SESSION#${sessionId}` }),
  /**
   * A session's place in gsi1, the sessions of an organization newest `updated_at` first;
   * written with every change of `updated_at` (acceptance and outcome).
   */
  sessionListing: (organizationId: string, updatedAt: string, sessionId: string) => ({
    gsi1pk: `SESSIONS#${organizationId}`,
    gsi1sk: `${updatedAt}#${sessionId}`,
  }),
  /** gsi1's partition of an organization's sessions. */
  sessionsOf: (organizationId: string) => ({ index: 'gsi1', gsi1pk: `SESSIONS#${organizationId}` }),

  /** Everything a session partition holds (messages, audit events, invocation references): what a delete removes. */
  sessionContents: (organizationId: string, sessionId: string) => ({ pk: sessionPartition(organizationId, sessionId) }),
  /**
   * The invocations of a session, one reference per position, put at acceptance: how a
   * session delete finds the invocations (keyed per organization, not per session) to remove.
   */
  invocationRefsOf: (organizationId: string, sessionId: string) => ({ pk: sessionPartition(organizationId, sessionId), skPrefix: 'INVREF#' }),
  invocationRef: (organizationId: string, sessionId: string, position: number): Key => ({
    pk: sessionPartition(organizationId, sessionId),
    sk: `INVREF#${pad(position, 10)}`,
  }),

  /** Messages of a session by cursor (zero-padded so the sort key orders numerically). */
  messagesOf: (organizationId: string, sessionId: string) => ({ pk: sessionPartition(organizationId, sessionId), skPrefix: 'MSG#' }),
  message: (organizationId: string, sessionId: string, cursor: number): Key => ({
    pk: sessionPartition(organizationId, sessionId),
    sk: `MSG#${pad(cursor, 10)}`,
  }),

  /** Audit events of a session in event time order. */
  auditOf: (organizationId: string, sessionId: string) => ({ pk: sessionPartition(organizationId, sessionId), skPrefix: 'AUDIT#' }),
  auditEvent: (organizationId: string, sessionId: string, eventTime: string, eventId: string): Key => ({
    pk: sessionPartition(organizationId, sessionId),
    sk: `AUDIT#${eventTime}#${eventId}`,
  }),

  /**
   * An invocation by its key (unique per organization): idempotency record and trace summary.
   * Deleting its session deletes it, so the key is free again (see `invocationRef`).
   */
  invocation: (organizationId: string, invocationKey: string): Key => ({ pk: org(organizationId), sk: `INV#${invocationKey}` }),

  /**
   * An invocation item's places in the trace search indexes, each sorted by `started_at`.
   * Sparse: an invocation without a recorded name or revision is absent from that index,
   * so those filters never match it. `tr_status` is rewritten when the outcome is recorded.
   */
  traceListing: (
    organizationId: string,
    invocation: { session_id: string; status: string; agent_name?: string; agent_revision?: string },
  ) => ({
    tr_org: traces(organizationId),
    tr_session: `${traces(organizationId)}#SESSION#${invocation.session_id}`,
    tr_status: `${traces(organizationId)}#STATUS#${invocation.status}`,
    ...(invocation.agent_name ? { tr_agent: `${traces(organizationId)}#AGENT#${invocation.agent_name}` } : {}),
    ...(invocation.agent_revision ? { tr_revision: `${traces(organizationId)}#REV#${invocation.agent_revision}` } : {}),
  }),
  /**
   * Where GET /traces reads for one filter: the index, its partition attribute and value
   * (invocations of the organization newest first by `started_at`).
   */
  tracesBy: (
    organizationId: string,
    filter: { kind: 'org' } | { kind: 'agent' | 'revision' | 'status' | 'session'; value: string },
  ) => {
    if (filter.kind === 'org') return { index: 'traces_by_org', attribute: 'tr_org', value: traces(organizationId) };
    const labels = { agent: 'AGENT', revision: 'REV', status: 'STATUS', session: 'SESSION' } as const;
    return {
      index: `traces_by_${filter.kind}`,
      attribute: `tr_${filter.kind}`,
      value: `${traces(organizationId)}#${labels[filter.kind]}#${filter.value}`,
    };
  },

  /** Everything an invocation partition holds (attempts and spans): what a session delete removes. */
  invocationContents: (organizationId: string, invocationKey: string) => ({ pk: invocationPartition(organizationId, invocationKey) }),

  /** Attempts of an invocation, by number. */
  attemptsOf: (organizationId: string, invocationKey: string) => ({ pk: invocationPartition(organizationId, invocationKey), skPrefix: 'ATT#' }),
  attempt: (organizationId: string, invocationKey: string, attempt: number): Key => ({
    pk: invocationPartition(organizationId, invocationKey),
    sk: `ATT#${pad(attempt, 3)}`,
  }),

  /** Spans of an invocation, oldest first: by attempt, then by sequence within it. */
  spansOf: (organizationId: string, invocationKey: string) => ({ pk: invocationPartition(organizationId, invocationKey), skPrefix: 'SPAN#' }),
  span: (organizationId: string, invocationKey: string, attempt: number, seq: number): Key => ({
    pk: invocationPartition(organizationId, invocationKey),
    sk: `SPAN#${pad(attempt, 3)}#${pad(seq, 6)}`,
  }),

  /** An agent name of an organization: revision count, current revision. */
  agent: (organizationId: string, name: string): Key => ({ pk: org(organizationId), sk: `AGENT#${name}` }),
  agentsOf: (organizationId: string) => ({ pk: org(organizationId), skPrefix: 'AGENT#' }),
  /** Revisions of an agent name, each with its configuration. */
  revisionsOf: (organizationId: string, name: string) => ({ pk: `AGENT#${organizationId}#${name}`, skPrefix: 'REV#' }),
  revision: (organizationId: string, name: string, revision: string): Key => ({
    pk: `AGENT#${organizationId}#${name}`,
    sk: `REV#${revision}`,
  }),

  /**
   * Memories of a group of an organization, by id. Ids are time-ordered, so a reverse
   * query reads them newest first; deleting the group deletes the partition.
   */
  memoriesOf: (organizationId: string, group: string) => ({ pk: memoryPartition(organizationId, group), skPrefix: 'MEM#' }),
  memory: (organizationId: string, group: string, memoryId: string): Key => ({ pk: memoryPartition(organizationId, group), sk: `MEM#${memoryId}` }),
  /** The mark that an invocation's memories were distilled: at most once per invocation, deleted with its session. */
  memoryDistillation: (organizationId: string, invocationKey: string): Key => ({
    pk: invocationPartition(organizationId, invocationKey),
    sk: 'MEMORY_DISTILLATION',
  }),

  /**
   * Where an organization sends what happened: its webhooks and its OTLP export settings,
   * under one prefix, so announcing an outcome reads them all in one query.
   */
  outboundOf: (organizationId: string) => ({ pk: org(organizationId), skPrefix: 'OUTBOUND#' }),
  webhooksOf: (organizationId: string) => ({ pk: org(organizationId), skPrefix: 'OUTBOUND#WEBHOOK#' }),
  webhook: (organizationId: string, webhookId: string): Key => ({ pk: org(organizationId), sk: `OUTBOUND#WEBHOOK#${webhookId}` }),
  otlpSettings: (organizationId: string): Key => ({ pk: org(organizationId), sk: 'OUTBOUND#OTLP' }),
  /** A webhook's delivery log, newest last: by the time a try ended, its event and its number. */
  deliveryLog: (organizationId: string, webhookId: string) => ({ pk: `HOOK#${organizationId}#${webhookId}`, skPrefix: 'DLV#' }),
  deliveryAttempt: (organizationId: string, webhookId: string, time: string, eventId: string, attempt: number): Key => ({
    pk: `HOOK#${organizationId}#${webhookId}`,
    sk: `DLV#${time}#${eventId}#${pad(attempt, 3)}`,
  }),
  /** The tries a delivery (one event to one target) has made so far. */
  deliveryCounter: (organizationId: string, eventId: string): Key => ({ pk: `DELIVERY#${organizationId}#${eventId}`, sk: 'DELIVERY' }),

  /** A fixed key the health check reads; it never exists. */
  health: (): Key => ({ pk: 'HEALTH', sk: 'HEALTH' }),
};
