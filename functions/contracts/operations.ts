/**
 * Every operation of the route table, in table order: what the OpenAPI document is built
 * from. Handlers import their own operation from its contract module, never this list, so
 * each Lambda bundle carries only the contracts of its route.
 */
import type { RouteKey } from '#functions/routes';
import { getAgentOperation, getRevisionOperation, listAgentsOperation } from './agents';
import { createInviteOperation, healthOperation, listModelsOperation, whoamiOperation } from './identity';
import { deleteMemoriesOperation, deleteMemoryOperation, listMemoriesOperation } from './memories';
import { getOpenApiOperation } from './openapi';
import {
  createWebhookOperation,
  deleteOtlpOperation,
  deleteWebhookOperation,
  getOtlpOperation,
  getWebhookOperation,
  listDeliveriesOperation,
  listWebhooksOperation,
  putOtlpOperation,
} from './outbound';
import type { Operation } from './operation';
import {
  createSecretOperation,
  deleteSecretOperation,
  getSecretOperation,
  listSecretsOperation,
  updateSecretOperation,
} from './secrets';
import {
  deleteSessionOperation,
  getAuditOperation,
  getSessionOperation,
  listSessionsOperation,
  runSessionOperation,
} from './sessions';
import { createTokenOperation, deleteTokenOperation, getTokenOperation, listTokensOperation } from './tokens';
import { cancelTraceOperation, getSpanOperation, getTraceOperation, listTracesOperation, traceEventsOperation } from './traces';

const all = [
  healthOperation,
  whoamiOperation,
  listModelsOperation,
  createInviteOperation,
  listTokensOperation,
  createTokenOperation,
  getTokenOperation,
  deleteTokenOperation,
  listSecretsOperation,
  createSecretOperation,
  getSecretOperation,
  updateSecretOperation,
  deleteSecretOperation,
  listSessionsOperation,
  getAuditOperation,
  deleteSessionOperation,
  runSessionOperation,
  getSessionOperation,
  listTracesOperation,
  getTraceOperation,
  getSpanOperation,
  traceEventsOperation,
  cancelTraceOperation,
  listMemoriesOperation,
  deleteMemoryOperation,
  deleteMemoriesOperation,
  listAgentsOperation,
  getAgentOperation,
  getRevisionOperation,
  createWebhookOperation,
  listWebhooksOperation,
  getWebhookOperation,
  deleteWebhookOperation,
  listDeliveriesOperation,
  putOtlpOperation,
  getOtlpOperation,
  deleteOtlpOperation,
  getOpenApiOperation,
] as const;

type Covered = `${(typeof all)[number]['route']['method']} ${(typeof all)[number]['route']['path']}`;
type AssertNever<T extends never> = T;
/** Compile-time check: a route of the table without an operation here fails the typecheck, naming it. */
export type MissingOperations = AssertNever<Exclude<RouteKey, Covered>>;

/** The operations, one per route; the `openapi` unit test holds them to the route table at run time too. */
export const operations: readonly Operation[] = all;

/** `METHOD /path` of an operation, as the route table keys it. */
export function operationKey(operation: Operation): string {
  return `${operation.route.method} ${operation.route.path}`;
}
