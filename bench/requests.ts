/**
 * What one invocation asks of the cloud: requests to DynamoDB, S3, Step Functions, Secrets
 * Manager and the Lambda endpoint, counted by proxies in front of the emulators, for a
 * 1-step and a 10-step invocation (each further step: one model call and one tool call).
 * Runs are started without waiting (202) and watched on the emulator directly, so the
 * waiting request's reads are not counted.
 */
import './quiet';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { keys } from '#data/keys';
import { startLocalCloud } from '#local/cloud';
import type { RequestCounts } from '#local/request-counter';
import { answer, startFakeOpenAI, toolCall } from '../test/fakes/openai-server';

const RUNS = Number(process.env.BENCH_REQUEST_RUNS ?? 5);
const SERVICES = ['dynamodb', 's3', 'stepfunctions', 'secretsmanager', 'lambda'];

/** Starts a cloud of its own (the proxies would slow the latency benchmarks) and prints requests per invocation. Run by run.ts in a process of its own. */
async function benchRequests(): Promise<void> {
  const counts: RequestCounts = {};
  const cloud = await startLocalCloud({ port: 0, dataDir: null, countRequests: counts });
  const model = await startFakeOpenAI();
  const raw = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: cloud.emulators.dynamodb }));
  try {
    const { token } = (await (await fetch(`${cloud.baseUrl}/local/sign-in`, { method: 'POST', body: JSON.stringify({ email: 'dev@localhost' }) })).json()) as { token: string };
    const headers = { authorization: `Bearer ${token}` };
    const { organization_id: organizationId } = (await (await fetch(`${cloud.baseUrl}/whoami`, { headers })).json()) as { organization_id: string };
    const agent = { model: { name: 'fake', provider: { name: 'openai', url: model.url } }, max_steps: 20 };
    let sequence = 0;

    const invoke = async (steps: number): Promise<void> => {
      model.enqueue(...Array.from({ length: steps - 1 }, () => toolCall('lookup', { q: 'x' })), answer('pong'));
      const key = `requests-${sequence++}`;
      const res = await fetch(`${cloud.baseUrl}/sessions/requests-${steps}?wait_timeout_seconds=0`, {
        method: 'POST',
        headers: { ...headers, 'idempotency-key': key },
        body: JSON.stringify({ user_prompt: 'ping', agent_name: 'bench', agent }),
      });
      if (res.status !== 202) throw new Error(`the run answered ${res.status}: ${await res.text()}`);
      for (;;) {
        const { Item } = await raw.send(new GetCommand({ TableName: cloud.env.TABLE_NAME, Key: keys.invocation(organizationId, key), ConsistentRead: true }));
        if (Item?.status === 'SUCCEEDED') return;
        if (Item?.status !== 'RUNNING') throw new Error(`invocation ${key} ended ${String(Item?.status)}`);
        await sleep(20);
      }
    };

    const perInvocation = async (steps: number) => {
      await invoke(steps); // warm-up: sandboxes start, the revision is recorded
      const before = { ...counts };
      for (let run = 0; run < RUNS; run++) await invoke(steps);
      return Object.fromEntries(SERVICES.map((service) => [service, ((counts[service] ?? 0) - (before[service] ?? 0)) / RUNS]));
    };
    const one = await perInvocation(1);
    const ten = await perInvocation(10);
    console.log(`\nRequests per invocation (mean of ${RUNS}; the waiting request's reads aside)`);
    console.log(`${'service'.padEnd(16)}${'1-step'.padStart(8)}${'10-step'.padStart(9)}${'per further step'.padStart(18)}`);
    for (const service of SERVICES) {
      const further = (ten[service]! - one[service]!) / 9;
      console.log(`${service.padEnd(16)}${one[service]!.toFixed(1).padStart(8)}${ten[service]!.toFixed(1).padStart(9)}${further.toFixed(1).padStart(18)}`);
    }
    const data = (row: Record<string, number>) => row.dynamodb! + row.s3!;
    console.log(`${'dynamodb + s3'.padEnd(16)}${data(one).toFixed(1).padStart(8)}${data(ten).toFixed(1).padStart(9)}${((data(ten) - data(one)) / 9).toFixed(1).padStart(18)}`);
  } finally {
    raw.destroy();
    await model.close();
    await cloud.stop();
  }
}

await benchRequests();
