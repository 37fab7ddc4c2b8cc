/**
 * The service's metrics (CloudWatch Embedded Metric Format log lines, which are plain log
 * lines locally): a run, a failed run and a refused request leave the metrics a deployer's
 * dashboard and alarms read, with their dimensions, and never a secret value.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { METRIC, METRICS_NAMESPACE } from '#kit/metric-names';
import { answer, startFakeOpenAI, status, toolCall, type FakeOpenAIServer } from '../fakes/openai-server';
import { newOrganization, request } from './support';

const CANARY = 'sk-metrics-canary-91c7';

let model: FakeOpenAIServer;

beforeAll(async () => {
  model = await startFakeOpenAI();
});

afterAll(() => model.close());

interface EmfLine {
  _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] };
  [field: string]: unknown;
}

async function metricLines(): Promise<EmfLine[]> {
  const log = await readFile(inject('serviceLogFile'), 'utf8');
  return log
    .split('\n')
    .filter((line) => line.startsWith('{"_aws"'))
    .map((line) => JSON.parse(line) as EmfLine);
}

describe('metrics', () => {
  it('are emitted for runs, their attempts, tokens, latency, failures by kind and answers by route', async () => {
    const { token } = await newOrganization();
    await request('POST', '/secrets', { token, body: { name: 'MODEL_KEY', value: CANARY } });
    const agent = { model: { name: 'gpt-fake', provider: { name: 'openai', url: model.url, credential: '{{secret:MODEL_KEY}}' } } };
    const run = (session: string) =>
      request('POST', `/sessions/${session}?wait_timeout_seconds=30`, { token, body: { user_prompt: 'Go', agent_name: 'measured', agent } });

    model.enqueue(toolCall('lookup', { q: 'x' }), answer('done'));
    expect((await run('metrics-ok')).status).toBe(200);
    // A refusal no attempt can change fails the run at once: interrupted.
    model.enqueue(status(401, { error: { message: 'bad key' } }));
    expect((await run('metrics-failed')).status).toBe(502);
    expect((await request('GET', '/sessions/no-such-session', { token })).status).toBe(404);

    const lines = await metricLines();
    const emitted = (name: string, dimensions: string[]) =>
      lines.filter((line) => line._aws.CloudWatchMetrics.some((m) => m.Namespace === METRICS_NAMESPACE && m.Metrics.some((x) => x.Name === name) && m.Dimensions.some((set) => set.join() === dimensions.join())));

    for (const name of [METRIC.invocationsAccepted, METRIC.invocationsSucceeded, METRIC.attemptsStarted, METRIC.tokensInput, METRIC.tokensOutput, METRIC.modelCallLatency, METRIC.stepLatency]) {
      expect(emitted(name, ['service']).length, name).toBeGreaterThan(0);
    }
    expect(emitted(METRIC.invocationsFailed, ['service']).length).toBeGreaterThan(0);
    expect(emitted(METRIC.invocationsFailed, ['service', 'kind']).map((line) => line.kind)).toContain('interrupted');
    expect(emitted(METRIC.http4xx, ['service', 'route']).map((line) => line.route)).toContain('GET /sessions/{id}');
    expect(emitted(METRIC.modelCallLatency, ['service']).every((line) => typeof line[METRIC.modelCallLatency] === 'number')).toBe(true);
    expect(JSON.stringify(lines)).not.toContain(CANARY);
  });
});
