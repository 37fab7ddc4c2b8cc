import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '#data/keys';
import { startCloudProcess, type CloudProcess } from '#local/cloud-process';
import { answer, startFakeOpenAI, toolCall, type FakeOpenAIServer } from '../fakes/openai-server';
import { request } from './support';

// A service of its own whose spans are kept only RETENTION seconds: long enough for a run
// to finish and be read, short enough to wait out.
const RETENTION = 20;

let dir: string;
let cloud: CloudProcess;
let model: FakeOpenAIServer;
let token: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agent-sessions-retention-'));
  model = await startFakeOpenAI();
  cloud = await startCloudProcess({
    port: 0,
    dataDir: null,
    env: { FOUNDER_EMAILS: 'dev@localhost', ATTEMPT_TIMEOUT_SECONDS: '6', SPAN_RETENTION_SECONDS: String(RETENTION) },
    logFile: join(dir, 'service.log'),
  });
  token = (await request('POST', '/local/sign-in', { base: cloud.baseUrl, body: { email: 'dev@localhost' } })).body.token;
}, 60_000);

afterAll(async () => {
  await cloud?.stop();
  await model.close();
  await rm(dir, { recursive: true, force: true });
});

const get = (path: string) => request('GET', path, { base: cloud.baseUrl, token });

function run(session: string, key: string, agent: Record<string, unknown>) {
  return request('POST', `/sessions/${session}`, {
    base: cloud.baseUrl,
    token,
    headers: { 'idempotency-key': key },
    body: { user_prompt: 'Go', agent_name: 'short-lived', agent: { model: { name: 'gpt-fake', provider: { name: 'openai', url: model.url } }, ...agent } },
  });
}

/** The attempt items of an invocation, read from this service's own table. */
async function attemptItems(organizationId: string, invocationKey: string) {
  const client = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint: cloud.env.AWS_ENDPOINT_URL_DYNAMODB,
      region: cloud.env.AWS_REGION,
      credentials: { accessKeyId: cloud.env.AWS_ACCESS_KEY_ID!, secretAccessKey: cloud.env.AWS_SECRET_ACCESS_KEY! },
    }),
  );
  try {
    const { pk, skPrefix } = keys.attemptsOf(organizationId, invocationKey);
    const { Items } = await client.send(
      new QueryCommand({
        TableName: cloud.env.TABLE_NAME,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
        ConsistentRead: true,
      }),
    );
    return Items ?? [];
  } finally {
    client.destroy();
  }
}

describe('span retention (SPAN_RETENTION_SECONDS)', () => {
  it('expires spans and attempts after the window but keeps the summary and the failure', async () => {
    model.enqueue(toolCall('lookup', {}), answer('done'));
    expect((await run('kept', 'ok-run', {})).status).toBe(200);
    model.enqueue(toolCall('lookup', {}));
    expect((await run('failing', 'failed-run', { max_steps: 1 })).status).toBe(502);

    const fresh = await get('/traces/ok-run');
    const failed = await get('/traces/failed-run');
    expect(fresh.body).toMatchObject({ status: 'SUCCEEDED', spans_expired: false, attempts: [expect.objectContaining({ number: 1 })] });
    expect(fresh.body.spans).toHaveLength(3);
    expect(failed.body).toMatchObject({ status: 'FAILED', spans_expired: false, failure: { kind: 'interrupted' } });
    expect(failed.body.spans).toHaveLength(2);
    // Attempt items carry the same TTL as span items: the invocation's start plus the window.
    const { organization_id: organizationId } = (await get('/whoami')).body;
    expect((await attemptItems(organizationId, 'ok-run')).map((item) => item.expires_at)).toEqual([
      Math.floor(Date.parse(fresh.body.started_at) / 1000) + RETENTION,
    ]);

    const waitUntil = Math.max(Date.parse(fresh.body.started_at), Date.parse(failed.body.started_at)) + RETENTION * 1000 + 500;
    await sleep(Math.max(0, waitUntil - Date.now()));

    for (const query of ['', '?payloads=false', '?attempts=all']) {
      const expired = await get(`/traces/ok-run${query}`);
      expect(expired.status).toBe(200);
      expect(expired.body).toMatchObject({ status: 'SUCCEEDED', spans_expired: true, spans: [], session_position: 1 });
      expect(expired.body.attempts).toBeUndefined();
      expect(expired.body.next_cursor).toBeUndefined();
    }
    const gone = await get('/traces/failed-run');
    expect(gone.body).toMatchObject({ status: 'FAILED', spans_expired: true, spans: [], failure: { kind: 'interrupted', message: expect.any(String) } });
    expect(gone.body.attempts).toBeUndefined();

    const listed = await get('/traces');
    expect(listed.body.traces.map((t: { invocation_key: string; spans_expired: boolean }) => [t.invocation_key, t.spans_expired])).toEqual([
      ['failed-run', true],
      ['ok-run', true],
    ]);
    expect((await get('/traces?status=FAILED')).body.traces.map((t: { invocation_key: string }) => t.invocation_key)).toEqual(['failed-run']);
  }, 120_000);
});
