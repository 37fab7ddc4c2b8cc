/**
 * GET /whoami with an API key through the local gateway, against the DynamoDB read that
 * request needs (one consistent GetItem of the key's lookup item) done directly. The
 * ratio is our overhead over the raw data access: HTTP, the event, middy, zod, logging.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '#data/keys';
import { sha256 } from '#kit/ids';
import type { LocalCloud } from '#local/cloud';
import { figures, printComparison, sample } from './stats';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1000);

async function post(cloud: LocalCloud, path: string, body: unknown, token?: string): Promise<Record<string, string | undefined>> {
  const res = await fetch(`${cloud.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`POST ${path} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as Record<string, string | undefined>;
}

/** Runs the benchmark against a started local cloud and prints its figures. */
export async function benchWhoami(cloud: LocalCloud): Promise<void> {
  const { token } = await post(cloud, '/local/sign-in', { email: 'dev@localhost' });
  const { key } = await post(cloud, '/tokens', { name: 'bench' }, token);
  if (!token || !key) throw new Error('sign-in or key creation returned nothing');

  const viaGateway = await sample(REQUESTS, async () => {
    const res = await fetch(`${cloud.baseUrl}/whoami`, { headers: { authorization: `Bearer ${key}` } });
    if (res.status !== 200) throw new Error(`GET /whoami answered ${res.status}`);
    await res.arrayBuffer();
  });

  const dynamo = DynamoDBDocumentClient.from(new DynamoDBClient({}));
  const lookup = { TableName: cloud.env.TABLE_NAME, Key: keys.apiKey(sha256(key)), ConsistentRead: true };
  const direct = await sample(REQUESTS, async () => {
    const { Item } = await dynamo.send(new GetCommand(lookup));
    if (!Item) throw new Error('the key lookup item is missing');
  });

  const base = figures(direct);
  printComparison(`GET /whoami with an API key, ${REQUESTS} sequential requests`, [
    ['DynamoDB GetItem of the key lookup (direct)', base],
    ['GET /whoami through the local gateway', figures(viaGateway)],
  ], base);
}
