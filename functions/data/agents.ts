/** Agent names and their revisions: each distinct configuration that ran under a name. */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AgentConfig } from '#contracts/agent';
import { config } from '#core/config';
import { cancellationReasons, dynamo, transactWrite } from './dynamo';
import { keys } from './keys';

export interface Revision {
  revision: string;
  created_at: string;
  config: AgentConfig;
}

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
export async function getRevision(organizationId: string, name: string, revision: string): Promise<Revision | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.revision(organizationId, name, revision) }),
  );
  if (!Item) return undefined;
  return { revision: Item.revision, created_at: Item.created_at, config: Item.config };
}
