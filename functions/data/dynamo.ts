/** The DynamoDB document client, created once per process. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { config } from '#core/config';
import { keys } from './keys';

export const dynamo = DynamoDBDocumentClient.from(new DynamoDBClient({}), {
  marshallOptions: { removeUndefinedValues: true },
});

type RawItem = Parameters<typeof unmarshall>[0];

/**
 * Why a transaction was cancelled, one entry per action: the condition that failed and
 * the item it saw. DynamoDB returns those items raw even through the document client.
 */
export function cancellationReasons(error: unknown): { code?: string; item?: Record<string, unknown> }[] | undefined {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return undefined;
  const reasons = (error as { CancellationReasons?: { Code?: string; Item?: RawItem }[] }).CancellationReasons ?? [];
  return reasons.map((reason) => ({
    code: reason.Code,
    item: reason.Item ? unmarshall(reason.Item) : undefined,
  }));
}

/** True when a single conditional write failed its condition. */
export function isConditionFailure(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

/**
 * Runs a transaction, retrying while it is cancelled only because another transaction
 * touched the same items at the same moment (DynamoDB does not retry those itself).
 */
export async function transactWrite(input: TransactWriteCommandInput, attempts = 5): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await dynamo.send(new TransactWriteCommand(input));
      return;
    } catch (error) {
      const reasons = cancellationReasons(error);
      const conflictOnly = reasons?.some((r) => r.code === 'TransactionConflict') &&
        reasons.every((r) => r.code === 'TransactionConflict' || r.code === 'None');
      if (!conflictOnly || attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** attempt * Math.random()));
    }
  }
}

/** Resolves when the table answers a read; rejects with the reason otherwise. */
export async function probeTable(signal: AbortSignal): Promise<void> {
  await dynamo.send(new GetCommand({ TableName: config.tableName, Key: keys.health() }), { abortSignal: signal });
}

/** Every item of a partition whose sort key starts with a prefix, in sort key order. */
export async function queryPrefix(
  key: { pk: string; skPrefix: string },
  options: { consistent?: boolean } = {},
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: config.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': key.pk, ':prefix': key.skPrefix },
        ExclusiveStartKey: startKey,
        ConsistentRead: options.consistent,
      }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}
