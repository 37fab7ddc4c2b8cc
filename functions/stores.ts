/**
 * Where the domain's store interfaces (declared in `core/`) meet their implementations
 * over DynamoDB, S3 and Secrets Manager (`data/`): handlers and workflow tasks take their
 * stores from here, each bound to one organization, and import nothing of `data/`
 * themselves. One named factory per store, so each function's bundle keeps only the
 * implementations it uses.
 */

/** Accepting runs (`core/runs.ts`). */
export { acceptanceStore } from '#data/acceptance';
/** Attempts and outcomes of invocations (`core/attempts.ts`). */
export { attemptStore } from '#data/attempts';
/** API keys (`core/tokens.ts`). */
export { tokenStore } from '#data/tokens';
/** Secrets: metadata and values (`core/secrets.ts`). */
export { secretStore } from '#data/secrets';
/** Invites an organization sends (`core/invites.ts`). */
export { inviteStore } from '#data/invites';
/** Credentials and memberships, for authentication (`core/identity.ts`). */
export { identityStore } from '#data/users';
/** Sessions, their messages and audit logs (`core/sessions.ts`). */
export { sessionStore } from '#data/sessions';
/** Executions of the run's state machine (`core/sessions.ts`). */
export { runEngine } from '#data/workflow';
/** Memory groups (`core/memories.ts`). */
export { memoryStore } from '#data/memories';
/** What a slice of an attempt reads and writes (`core/run-attempt.ts`). */
export { sliceStore } from '#data/slice';
/** The records an invocation's events derive from (`core/events.ts`). */
export { eventStore } from '#data/events';
/** The table and bucket probes of GET /health (`core/health.ts`). */
export { healthProbes } from '#data/health';
/** Agent names and their revisions (`core/agents.ts`). */
export { agentStore } from '#data/agents';
/** Invocations' traces and their search (`core/traces.ts`). */
export { traceStore } from '#data/traces';
/** Webhooks and their delivery logs (`core/webhooks.ts`). */
export { webhookStore } from '#data/outbound';
/** OTLP export settings (`core/otlp-settings.ts`). */
export { otlpSettingsStore } from '#data/outbound';
/** What one try of a delivery reads and records (`core/deliveries.ts`). */
export { deliveryStore } from '#data/deliveries';
