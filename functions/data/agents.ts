/** Agent names and their revisions: each distinct configuration that ran under a name. */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { AgentConfig } from '#contracts/agent';
import type { Agent, AgentStore, AgentSummary, Revision, RevisionDate } from '#core/agents';
import { config } from '#kit/config';
import { cancellationReasons, dynamo, isConditionFailure, queryPrefix, transactWrite } from './dynamo';
import { entity } from './entity';
import { keys } from './keys';

const revisionDateAttributes = { revision: z.string(), created_at: z.string() };

/**
 * A revision item. Its configuration passed the same schema when the run was accepted, so
 * reading it back through that schema only confirms what was stored.
 */
const revisionEntity = entity('Revision', z.object({ ...revisionDateAttributes, config: AgentConfig }) satisfies z.ZodType<Revision>);

/** A revision item read without its configuration. */
const revisionDateEntity = entity('Revision', z.object(revisionDateAttributes) satisfies z.ZodType<RevisionDate>);

const summaryAttributes = {
  name: z.string(),
  revision_count: z.number(),
  created_at: z.string(),
  updated_at: z.string(),
};

/** An agent name's item as the list shows it. */
const summaryEntity = entity('Agent', z.object(summaryAttributes) satisfies z.ZodType<AgentSummary>);

/** An agent name's item with the revision its latest run used. */
const agentEntity = entity('Agent', z.object({ ...summaryAttributes, current_revision: z.string() }) satisfies z.ZodType<Agent>);

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
  return revisionEntity.parseOptional(Item);
}

/** Agent names of an organization, in sort key (code point) order of the name. */
export async function listAgents(organizationId: string): Promise<AgentSummary[]> {
  return (await queryPrefix(keys.agentsOf(organizationId))).map(summaryEntity.parse);
}

/** One agent name with its current revision, read strongly consistent. */
export async function getAgent(organizationId: string, name: string): Promise<Agent | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.agent(organizationId, name), ConsistentRead: true }),
  );
  return agentEntity.parseOptional(Item);
}

/**
 * Every revision of an agent name, without its configuration (which can be large), read
 * strongly consistent, by revision id (not time).
 */
export async function listRevisionDates(organizationId: string, name: string): Promise<RevisionDate[]> {
  const items = await queryPrefix(keys.revisionsOf(organizationId, name), { consistent: true, attributes: ['revision', 'created_at'] });
  return items.map(revisionDateEntity.parse);
}

/** The agent names of `organizationId` and their revisions (`core/agents.ts` declares the store). */
export function agentStore(organizationId: string): AgentStore {
  return {
    list: () => listAgents(organizationId),
    agent: (name) => getAgent(organizationId, name),
    revision: (name, revision, options) => getRevision(organizationId, name, revision, options),
    revisionDates: (name) => listRevisionDates(organizationId, name),
  };
}
