/** Messages of a session, by cursor. */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { config } from '#kit/config';
import type { Message } from '#core/model';
import { dynamo, queryPage } from './dynamo';
import { entity } from './entity';
import { keys } from './keys';

const messageEntity = entity('Message', z.object({
  cursor: z.number(),
  invocation_key: z.string(),
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  created_at: z.string(),
}) satisfies z.ZodType<Message>);

/** One message by cursor. */
export async function getMessage(organizationId: string, sessionId: string, cursor: number): Promise<Message | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.message(organizationId, sessionId, cursor), ConsistentRead: true }),
  );
  return messageEntity.parseOptional(Item);
}

/** Up to `limit` messages after a cursor, ascending, and whether more follow. */
export async function listMessages(
  organizationId: string,
  sessionId: string,
  after: number,
  limit: number,
): Promise<{ messages: Message[]; more: boolean }> {
  const { pk } = keys.messagesOf(organizationId, sessionId);
  const { items, more } = await queryPage(
    {
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        ':pk': pk,
        ':from': keys.message(organizationId, sessionId, after + 1).sk,
        ':to': keys.message(organizationId, sessionId, 9_999_999_999).sk,
      },
      ConsistentRead: true,
    },
    limit,
  );
  return { messages: items.map(messageEntity.parse), more };
}
