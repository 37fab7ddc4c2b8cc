import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { DescribeTableCommand, DescribeTimeToLiveCommand, GetItemCommand, ListTablesCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTable, localDynamoDbClient, startDynamoDb, warmUpDynamoDb, type TableSchema } from '#local/dynamodb';

const TABLE = 'local-test-table';
const withoutIndexes: TableSchema = { partitionKey: 'pk', sortKey: 'sk', ttlAttribute: 'expires_at', globalIndexes: [] };
const withIndex: TableSchema = { ...withoutIndexes, globalIndexes: [{ name: 'by-owner', partitionKey: 'owner_pk', sortKey: 'owner_sk' }] };
let dir: string;

/**
 * Starts DynamoDB Local on `dataDir` in another Node process, creates the table there and
 * writes one item; resolves with that process and the endpoint.
 */
async function startElsewhere(dataDir: string) {
  const moduleUrl = new URL('../../local/dynamodb.ts', import.meta.url).href;
  const script = `
    const { PutItemCommand } = await import('@aws-sdk/client-dynamodb');
    const { ensureTable, localDynamoDbClient, startDynamoDb } = await import(${JSON.stringify(moduleUrl)});
    const dynamodb = await startDynamoDb({ dataDir: ${JSON.stringify(dataDir)} });
    const client = localDynamoDbClient(dynamodb.endpoint);
    const schema = ${JSON.stringify(withoutIndexes)};
    await ensureTable(client, '${TABLE}', schema);
    await ensureTable(client, '${TABLE}', schema);
    await client.send(new PutItemCommand({ TableName: '${TABLE}', Item: { pk: { S: 'a' }, sk: { S: 'b' }, owner_pk: { S: 'o' }, owner_sk: { S: '1' } } }));
    console.log(dynamodb.endpoint);`;
  const parent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [endpoint] = (await once(createInterface({ input: parent.stdout! }), 'line')) as [string];
  return { parent, endpoint };
}

/** Whether any process still has `path` on its command line (the JVM holds its files until it exits). */
async function processUsing(path: string): Promise<boolean> {
  const { readdir, readFile } = await import('node:fs/promises');
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(path)) return true;
  }
  return false;
}

async function answers(url: string): Promise<boolean> {
  return fetch(url).then(
    () => true,
    () => false,
  );
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'local-dynamodb-test-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('DynamoDB Local', { timeout: 60_000 }, () => {
  it('dies with the process that started it, and its data dir outlives both', async () => {
    const { parent, endpoint } = await startElsewhere(dir);

    parent.kill('SIGKILL');
    // The JVM shuts down gracefully on the SIGTERM its guard sends; slow on a busy machine.
    let alive = true;
    for (let i = 0; i < 300 && alive; i++) {
      await sleep(100);
      alive = (await answers(endpoint)) || (await processUsing(dir));
    }
    expect(alive).toBe(false);

    // The table from the other process is there; ensuring it again adds the index the schema gained.
    const dynamodb = await startDynamoDb({ dataDir: dir });
    const client = localDynamoDbClient(dynamodb.endpoint);
    await ensureTable(client, TABLE, withIndex);
    await ensureTable(client, TABLE, withIndex);
    const table = (await client.send(new DescribeTableCommand({ TableName: TABLE }))).Table!;
    const ttl = (await client.send(new DescribeTimeToLiveCommand({ TableName: TABLE }))).TimeToLiveDescription;
    const item = await client.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'a' }, sk: { S: 'b' } } }));
    client.destroy();
    await dynamodb.stop();

    expect(table.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');
    expect(table.KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
    expect(table.GlobalSecondaryIndexes).toEqual([
      expect.objectContaining({ IndexName: 'by-owner', IndexStatus: 'ACTIVE', Projection: { ProjectionType: 'ALL' } }),
    ]);
    expect(ttl).toEqual({ AttributeName: 'expires_at', TimeToLiveStatus: 'ENABLED' });
    expect(item.Item?.owner_pk).toEqual({ S: 'o' });
    expect(await answers(dynamodb.endpoint)).toBe(false);
  });

  it('warms its JVM on a scratch table it drops, leaving the service table as it was', async () => {
    const dynamodb = await startDynamoDb({ dataDir: null });
    const client = localDynamoDbClient(dynamodb.endpoint);
    try {
      await ensureTable(client, TABLE, withIndex);
      const item = { pk: { S: 'a' }, sk: { S: 'b' }, owner_pk: { S: 'o' }, owner_sk: { S: '1' } };
      await client.send(new PutItemCommand({ TableName: TABLE, Item: item }));

      await warmUpDynamoDb(dynamodb.endpoint, withIndex);

      expect((await client.send(new ListTablesCommand({}))).TableNames).toEqual([TABLE]);
      expect((await client.send(new GetItemCommand({ TableName: TABLE, Key: { pk: item.pk, sk: item.sk } }))).Item).toEqual(item);
    } finally {
      client.destroy();
      await dynamodb.stop();
    }
  });

  it('fails with a one-line reason when java is missing', async () => {
    const saved = { PATH: process.env.PATH, JAVA_HOME: process.env.JAVA_HOME };
    process.env.PATH = join(dir, 'no-java-here');
    delete process.env.JAVA_HOME;
    try {
      await expect(startDynamoDb({ dataDir: null })).rejects.toThrow(
        'Java 17+ is required for DynamoDB Local: install openjdk-17-jre-headless',
      );
    } finally {
      Object.assign(process.env, saved);
    }
  });
});
