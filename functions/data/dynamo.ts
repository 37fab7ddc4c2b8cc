/** The DynamoDB document client, created once per process. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  type QueryCommandInput,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { config } from '#kit/config';
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

/**
 * The one guard of the run's writes: `write` (an update or a condition check) holds only
 * while its item (an invocation, an attempt) is RUNNING, so a harness still at work after
 * its invocation ended, was cancelled or deleted, changes nothing.
 */
export function whileRunning<
  T extends { TableName: string; Key: Record<string, unknown>; ExpressionAttributeNames?: Record<string, string>; ExpressionAttributeValues?: Record<string, unknown> },
>(write: T) {
  return {
    ...write,
    ConditionExpression: '#status = :running',
    ExpressionAttributeNames: { ...write.ExpressionAttributeNames, '#status': 'status' },
    ExpressionAttributeValues: { ...write.ExpressionAttributeValues, ':running': 'RUNNING' },
  };
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

/** A query of the table, without the paging fields the pager sets. */
export type TableQuery = Omit<QueryCommandInput, 'TableName' | 'Limit' | 'ExclusiveStartKey'>;

type Item = Record<string, unknown>;

/**
 * The pages of a query, each up to `pageSize(itemsSoFar)` items (unbounded when it says
 * undefined), from `startKey` on; stops when the table has no more or the size is 0.
 */
async function* queryPages(
  query: TableQuery,
  startKey?: Item,
  pageSize: (seen: number) => number | undefined = () => undefined,
): AsyncGenerator<Item[]> {
  let seen = 0;
  do {
    const limit = pageSize(seen);
    if (limit === 0) return;
    const page = await dynamo.send(
      new QueryCommand({ ...query, TableName: config.tableName, Limit: limit, ExclusiveStartKey: startKey }),
    );
    const items = page.Items ?? [];
    seen += items.length;
    yield items;
    startKey = page.LastEvaluatedKey;
  } while (startKey);
}

/** Every item a query matches. */
export async function queryAll(query: TableQuery): Promise<Item[]> {
  const items: Item[] = [];
  for await (const page of queryPages(query)) items.push(...page);
  return items;
}

/**
 * Up to `limit` items of a query from `startKey` on, and whether more follow: one item
 * beyond the limit is read to know, so a `more` page is never empty.
 */
export async function queryPage(query: TableQuery, limit: number, startKey?: Item): Promise<{ items: Item[]; more: boolean }> {
  const items: Item[] = [];
  for await (const page of queryPages(query, startKey, (seen) => limit + 1 - seen)) items.push(...page);
  return { items: items.slice(0, limit), more: items.length > limit };
}

/**
 * Up to `limit` items of a partition whose sort key starts with a prefix, newest (last
 * sort key) first, after the item with sort key `afterSk`; read consistently.
 */
export function queryPrefixNewestFirst(key: { pk: string; skPrefix: string }, afterSk: string | undefined, limit: number): Promise<{ items: Item[]; more: boolean }> {
  return queryPage(
    {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': key.pk, ':prefix': key.skPrefix },
      ScanIndexForward: false,
      ConsistentRead: true,
    },
    limit,
    afterSk !== undefined ? { pk: key.pk, sk: afterSk } : undefined,
  );
}

/**
 * Every item of a partition whose sort key starts with a prefix, in sort key order; only
 * the named `attributes` of each when given.
 */
export async function queryPrefix(
  key: { pk: string; skPrefix: string },
  options: { consistent?: boolean; attributes?: readonly string[] } = {},
): Promise<Item[]> {
  const projection = options.attributes?.length
    ? {
        ProjectionExpression: options.attributes.map((_, i) => `#a${i}`).join(', '),
        ExpressionAttributeNames: Object.fromEntries(options.attributes.map((name, i) => [`#a${i}`, name])),
      }
    : {};
  return queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': key.pk, ':prefix': key.skPrefix },
    ConsistentRead: options.consistent,
    ...projection,
  });
}

/** The pages of keys of every item in a partition, read consistently (for deleting it). */
export function partitionKeyPages(pk: string): AsyncGenerator<Item[]> {
  return queryPages({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': pk },
    ProjectionExpression: 'pk, sk',
    ConsistentRead: true,
  });
}
