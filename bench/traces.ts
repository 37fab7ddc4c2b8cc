/**
 * Reading traces: GET /traces/{key} of a 500-span trace with `payloads=false` in one page
 * and with payloads a page of 25 at a time, each against the raw DynamoDB and S3 reads
 * that page needs (so the ratio is what the service adds: HTTP, authentication, cursor
 * signing, shaping); and GET /traces over 10,000 invocations with each filter, against
 * one raw Query of a page from the organization's index.
 */
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '#kit/config';
import { sha256 } from '#kit/ids';
import { dynamo } from '#data/dynamo';
import type { Invocation } from '#core/model';
import { keys } from '#data/keys';
import { payloadKey, s3 } from '#data/payloads';
import type { LocalCloud } from '#local/cloud';
import { attemptItem, batchPut, invocationItem, seedSpans, sessionItem } from '../test/seed/traces';
import { figures, printComparison, sample } from './stats';

const SPANS = 500;
const PAYLOAD_BYTES = 1024;
const INVOCATIONS = Number(process.env.BENCH_INVOCATIONS ?? 10_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const AGENTS = 20;
const REVISIONS_PER_AGENT = 5;
const SESSIONS = 500;
const DAY = 86_400_000;

async function json(res: Response): Promise<Record<string, any>> {
  const body = (await res.json()) as Record<string, any>;
  if (!res.ok) throw new Error(`${res.url} answered ${res.status}: ${JSON.stringify(body)}`);
  return body;
}

/** Every item of a query, page after page, read consistently. */
async function rawQuery(pk: string, from: string, to: string, limit: number): Promise<number> {
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.send(new QueryCommand({
      TableName: config.tableName,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': pk, ':from': from, ':to': to },
      ConsistentRead: true,
      Limit: limit - count,
      ExclusiveStartKey: start,
    }));
    count += page.Items?.length ?? 0;
    start = page.LastEvaluatedKey;
  } while (start && count < limit);
  return count;
}

/** Runs the benchmark against a started local cloud and prints its figures. */
export async function benchTraces(cloud: LocalCloud): Promise<void> {
  const { token } = await json(await fetch(`${cloud.baseUrl}/local/sign-in`, { method: 'POST', body: JSON.stringify({ email: 'dev@localhost' }) }));
  const get = (path: string) => fetch(`${cloud.baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } }).then(json);
  const { organization_id: organizationId } = await get('/whoami');

  // One 500-span trace with a 1 KiB input and output per span.
  const now = new Date().toISOString();
  const invocation: Invocation = {
    invocation_key: 'bench-trace', session_id: 'bench-trace-session', session_position: 1, status: 'SUCCEEDED',
    agent_name: 'bench', agent_revision: 'r', body_sha256: sha256('bench'), started_at: now, ended_at: now, user_cursor: 1,
  };
  await batchPut([invocationItem(organizationId, invocation), sessionItem(organizationId, invocation.session_id, 1, now), attemptItem(organizationId, invocation, 1)]);
  const { ids } = await seedSpans(organizationId, invocation, { attempt: 1, count: SPANS, payloadBytes: PAYLOAD_BYTES });

  const { pk } = keys.spansOf(organizationId, invocation.invocation_key);
  const span = (seq: number) => keys.span(organizationId, invocation.invocation_key, 1, seq).sk;
  const attempts = keys.attemptsOf(organizationId, invocation.invocation_key);
  const rawMeta = () => Promise.all([
    dynamo.send(new GetCommand({ TableName: config.tableName, Key: keys.invocation(organizationId, invocation.invocation_key), ConsistentRead: true })),
    rawQuery(attempts.pk, attempts.skPrefix, `${attempts.skPrefix}~`, 100),
  ]);
  const rawPayload = (key: string) => s3.send(new GetObjectCommand({ Bucket: config.payloadBucket, Key: key })).then((o) => o.Body!.transformToString());

  const bare = await sample(RUNS, async () => {
    const body = await get(`/traces/${invocation.invocation_key}?payloads=false`);
    if (body.spans.length !== SPANS) throw new Error(`expected ${SPANS} spans, got ${body.spans.length}`);
  }, 5);
  const rawBare = await sample(RUNS, () => Promise.all([rawMeta(), rawQuery(pk, span(0), span(999_999), SPANS + 1)]), 5);
  printComparison(`GET /traces/{key}, ${SPANS} spans, payloads=false, one page`, [
    ['raw reads (GetItem + 2 Query, consistent)', figures(rawBare)],
    ['through the service', figures(bare)],
  ], figures(rawBare));

  // Pages of 25 one after another (from the start again after the last), each with its 50 payload objects.
  let cursor: string | undefined;
  const paged = await sample(RUNS, async () => {
    const body = await get(`/traces/${invocation.invocation_key}${cursor ? `?after=${encodeURIComponent(cursor)}` : ''}`);
    cursor = body.next_cursor;
  }, 5);
  let offset = 0;
  const rawPaged = await sample(RUNS, async () => {
    const slice = ids.slice(offset, offset + 25);
    const from = span(offset + 1);
    offset = (offset + 25) % SPANS;
    await Promise.all([
      rawMeta(),
      rawQuery(pk, from, span(999_999), 26),
      ...slice.flatMap((id) => (['input', 'output'] as const).map((part) => rawPayload(payloadKey(organizationId, invocation.invocation_key, id, part)))),
    ]);
  }, 5);
  printComparison(`GET /traces/{key}, payloads=true, one page of 25 (50 payload objects of ${PAYLOAD_BYTES} B)`, [
    ['raw reads (GetItem + 2 Query + 50 GetObject)', figures(rawPaged)],
    ['through the service', figures(paged)],
  ], figures(rawPaged));
  const whole = await sample(Math.max(3, Math.ceil(RUNS / 6)), async () => {
    let after: string | undefined;
    let seen = 0;
    do {
      const body = await get(`/traces/${invocation.invocation_key}${after ? `?after=${encodeURIComponent(after)}` : ''}`);
      seen += body.spans.length;
      after = body.next_cursor;
    } while (after);
    if (seen !== SPANS) throw new Error(`expected ${SPANS} spans, got ${seen}`);
  }, 1);
  console.log(`  whole trace with payloads, ${SPANS / 25} pages: p50 ${figures(whole).p50.toFixed(0)} ms, p99 ${figures(whole).p99.toFixed(0)} ms`);

  // 10,000 invocations over the last 30 days: 20 agents, 5 revisions each, 500 sessions,
  // 80 % succeeded, 15 % failed, 5 % running.
  const start = Date.now();
  const base = Date.now() - 30 * DAY;
  const invocations = Array.from({ length: INVOCATIONS }, (_, i): Invocation => {
    const agent = i % AGENTS;
    // Spread independently of the agent (i % 20) and the revision.
    const draw = Number.parseInt(sha256(String(i)).slice(0, 8), 16) % 20;
    const status = draw === 0 ? 'RUNNING' : draw < 4 ? 'FAILED' : 'SUCCEEDED';
    const startedAt = new Date(base + Math.floor((i / INVOCATIONS) * 30 * DAY)).toISOString();
    return {
      invocation_key: `search-${i}`, session_id: `search-session-${i % SESSIONS}`, session_position: Math.floor(i / SESSIONS) + 1, status,
      agent_name: `agent-${agent}`, agent_revision: `rev-${agent}-${Math.floor(i / AGENTS) % REVISIONS_PER_AGENT}`,
      body_sha256: sha256(String(i)), started_at: startedAt, user_cursor: 1,
      // An ended invocation's outcome records its usage; a running one's is summed from its attempts.
      ...(status === 'RUNNING' ? {} : { ended_at: startedAt, usage: { input_tokens: 12, output_tokens: 3 } }),
      ...(status === 'FAILED' ? { failure: { kind: 'crash', message: 'bench' } } : {}),
    };
  });
  await batchPut([
    ...invocations.map((item) => invocationItem(organizationId, item)),
    ...Array.from({ length: SESSIONS }, (_, s) => sessionItem(organizationId, `search-session-${s}`, INVOCATIONS / SESSIONS, now)),
  ]);
  console.log(`\nseeded ${INVOCATIONS} invocations in ${((Date.now() - start) / 1000).toFixed(1)} s`);

  const org = keys.tracesBy(organizationId, { kind: 'org' });
  const rawSearch = await sample(RUNS, () => dynamo.send(new QueryCommand({
    TableName: config.tableName,
    IndexName: org.index,
    KeyConditionExpression: '#pk = :pk AND started_at BETWEEN :since AND :until',
    ExpressionAttributeNames: { '#pk': org.attribute },
    ExpressionAttributeValues: { ':pk': org.value, ':since': new Date(Date.now() - 31 * DAY).toISOString(), ':until': new Date().toISOString() },
    ScanIndexForward: false,
    Limit: 51,
  })), 5);
  const filters: [string, string][] = [
    ['no filter', ''],
    ['agent_name', 'agent_name=agent-3'],
    ['agent_revision', 'agent_revision=rev-3-2'],
    ['agent_name + agent_revision', 'agent_name=agent-3&agent_revision=rev-3-2'],
    ['status=FAILED', 'status=FAILED'],
    ['status=RUNNING', 'status=RUNNING'],
    ['session_id', 'session_id=search-session-7'],
    ['agent_name + status (filtered)', 'agent_name=agent-0&status=RUNNING'],
    ['since/until (one day)', `since=${new Date(base + 10 * DAY).toISOString()}&until=${new Date(base + 11 * DAY).toISOString()}`],
  ];
  const rows: [string, ReturnType<typeof figures>][] = [['raw Query, 51 items of the org index', figures(rawSearch)]];
  for (const [label, query] of filters) {
    rows.push([`GET /traces ${label}`, figures(await sample(RUNS, () => get(`/traces?${query}`), 3))]);
  }
  printComparison(`GET /traces over ${INVOCATIONS} invocations, a page of up to 50`, rows, figures(rawSearch));
}
