/** Agent names and their revisions: each distinct configuration that ran under a name. */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AgentConfig } from '#contracts/agent';
import { config } from '#kit/config';
import { cancellationReasons, dynamo, isConditionFailure, queryPrefix, transactWrite } from './dynamo';
import { keys } from './keys';

export interface Revision {
  revision: string;
  created_at: string;
  config: AgentConfig;
}

export interface AgentSummary {
  name: string;
  revision_count: number;
  created_at: string;
  updated_at: string;
}

export interface Agent extends AgentSummary {
  current_revision: string;
}

const toRevision = (item: Record<string, unknown>): Revision => ({
  revision: item.revision as string,
  created_at: item.created_at as string,
  config: item.config as AgentConfig,
});

const toSummary = (item: Record<string, unknown>): AgentSummary => ({
  name: item.name as string,
  revision_count: item.revision_count as number,
  created_at: item.created_at as string,
  updated_at: item.updated_at as string,
});

/**
 * Records that a configuration ran under a name. The first run of a configuration creates
 * its revision (its `created_at` is that run) and counts it; later runs only touch the name.
 * Safe to repeat.
 */
export async function recordRevision(organizationId: string, name: string, revision: Revision): Promise<void> {
  const touch = {
    TableName: config.tableName,
    Key: keys.agent(organizationId, name),
    UpdateExpression:
      'SET #type = :type, #name = :name, updated_at = :now, current_revision = :revision, created_at = if_not_exists(created_at, :now)',
    ExpressionAttributeNames: { '#type': 'type', '#name': 'name' },
    ExpressionAttributeValues: { ':type': 'Agent', ':name': name, ':now': revision.created_at, ':revision': revision.revision },
  };
  // Most runs repeat the name's current revision: then touching the name is all there is to do.
  try {
    await dynamo.send(new UpdateCommand({ ...touch, ConditionExpression: 'current_revision = :revision' }));
    return;
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
  try {
    await transactWrite({
      TransactItems: [
        {
          Put: {
            TableName: config.tableName,
            Item: { ...keys.revision(organizationId, name, revision.revision), type: 'Revision', ...revision },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        {
          Update: {
            ...touch,
            UpdateExpression: `${touch.UpdateExpression} ADD revision_count :one`,
            ExpressionAttributeValues: { ...touch.ExpressionAttributeValues, ':one': 1 },
          },
        },
      ],
    });
  } catch (error) {
    if (cancellationReasons(error)?.[0]?.code !== 'ConditionalCheckFailed') throw error;
    await dynamo.send(new UpdateCommand(touch));
  }
}

/** One revision of an agent name, with its configuration. */
export async function getRevision(
  organizationId: string,
  name: string,
  revision: string,
  options: { consistent?: boolean } = {},
): Promise<Revision | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.revision(organizationId, name, revision), ConsistentRead: options.consistent }),
  );
  return Item && toRevision(Item);
}

/** Agent names of an organization, in sort key (code point) order of the name. */
export async function listAgents(organizationId: string): Promise<AgentSummary[]> {
  return (await queryPrefix(keys.agentsOf(organizationId))).map(toSummary);
}

/** One agent name with its current revision, read strongly consistent. */
export async function getAgent(organizationId: string, name: string): Promise<Agent | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.agent(organizationId, name), ConsistentRead: true }),
  );
  return Item && { ...toSummary(Item), current_revision: Item.current_revision };
}

/**
 * Every revision of an agent name, without its configuration (which can be large), read
 * strongly consistent, by revision id (not time).
 */
export async function listRevisionDates(organizationId: string, name: string): Promise<Pick<Revision, 'revision' | 'created_at'>[]> {
  const items = await queryPrefix(keys.revisionsOf(organizationId, name), { consistent: true, attributes: ['revision', 'created_at'] });
  return items.map((item) => ({ revision: item.revision as string, created_at: item.created_at as string }));
}
