/** Messages of a session, by cursor. */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '#kit/config';
import { dynamo, queryPage } from './dynamo';
import { keys } from './keys';

export interface Message {
  cursor: number;
  invocation_key: string;
  role: 'user' | 'assistant';
  content: string;
  created_at: string;
}

const toMessage = ({ cursor, invocation_key, role, content, created_at }: Record<string, unknown>) =>
  ({ cursor, invocation_key, role, content, created_at }) as Message;

/** One message by cursor. */
export async function getMessage(organizationId: string, sessionId: string, cursor: number): Promise<Message | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.message(organizationId, sessionId, cursor), ConsistentRead: true }),
  );
  return Item ? toMessage(Item) : undefined;
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
  return { messages: items.map(toMessage), more };
}
