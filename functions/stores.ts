/**
 * Where the domain's store interfaces (declared in `core/`) meet their implementations
 * over DynamoDB, S3 and Secrets Manager (`data/`): handlers and workflow tasks take their
 * stores from here, each bound to one organization, and import nothing of `data/`
 * themselves. One named factory per store, so each function's bundle keeps only the
 * implementations it uses.
 */
import type { AgentSummary } from '#data/agents';
import { listAgents } from '#data/agents';

/** Accepting runs (`core/runs.ts`). */
export { acceptanceStore } from '#data/acceptance';
/** Attempts and outcomes of invocations (`core/attempts.ts`). */
export { attemptStore } from '#data/attempts';
/** API keys (`core/tokens.ts`). */
export { tokenStore } from '#data/tokens';

/** Agent names of one organization. */
export function agentStore(organizationId: string): { list(): Promise<AgentSummary[]> } {
  return { list: () => listAgents(organizationId) };
}
