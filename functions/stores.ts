/**
 * Where the domain's store interfaces (declared in `core/`) meet their implementations
 * over DynamoDB, S3 and Secrets Manager (`data/`): handlers and workflow tasks take their
 * stores from here, each bound to one organization, and import nothing of `data/` themselves.
 */
import { acceptanceStore } from '#data/acceptance';
import { listAgents } from '#data/agents';
import { attemptStore } from '#data/attempts';
import { tokenStore } from '#data/tokens';

export const stores = {
  /** Accepting runs (`core/runs.ts`). */
  acceptance: acceptanceStore,
  /** Attempts and outcomes of invocations (`core/attempts.ts`). */
  attempts: attemptStore,
  /** API keys (`core/tokens.ts`). */
  tokens: tokenStore,
  /** Agent names and their revisions (`core/agents.ts`). */
  agents: (organizationId: string) => ({ list: () => listAgents(organizationId) }),
};
