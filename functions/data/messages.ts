/** Messages of a session, by cursor. */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '#core/config';
import { dynamo } from './dynamo';
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
  const messages: Message[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: config.tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': pk, ':from': keys.message(organizationId, sessionId, after + 1).sk, ':to': keys.message(organizationId, sessionId, 9_999_999_999).sk },
        // One extra tells whether another page exists.
        Limit: limit + 1 - messages.length,
        ExclusiveStartKey: startKey,
        ConsistentRead: true,
      }),
    );
    messages.push(...(page.Items ?? []).map(toMessage));
    startKey = page.LastEvaluatedKey;
  } while (startKey && messages.length <= limit);
  return { messages: messages.slice(0, limit), more: messages.length > limit };
}
