/**
 * No invocation stays RUNNING (CONTRACT.md): an execution that ends without recording its
 * outcome, here stopped through the Step Functions API from outside, still ends its
 * invocation FAILED `interrupted`, appends `run_failed` and releases the session; and its
 * outcome reaches the organization's webhooks like any other.
 */
import { SFNClient, StopExecutionCommand } from '@aws-sdk/client-sfn';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getInvocation } from '#data/invocations';
import { executionName } from '#data/workflow';
import { handler } from '#functions/workflow/settle-execution';
import { answer, delay, hang, startFakeOpenAI, type FakeOpenAIServer } from '../fakes/openai-server';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../fakes/webhook-receiver';
import { newOrganization, request } from './support';

let model: FakeOpenAIServer;
let receiver: WebhookReceiver;

beforeAll(async () => {
  [model, receiver] = await Promise.all([startFakeOpenAI(), startWebhookReceiver()]);
});

afterAll(async () => {
  await Promise.all([model.close(), receiver.close()]);
});

const forKey = (key: string) => (hook: ReceivedWebhook) => JSON.parse(hook.body).data.invocation_key === key;

const run = (token: string, session: string, key: string, wait: number) =>
  request('POST', `/sessions/${session}?wait_timeout_seconds=${wait}`, {
    token,
    headers: { 'idempotency-key': key },
    body: { user_prompt: 'Go', agent_name: 'stoppable', agent: { model: { name: 'gpt-fake', provider: { name: 'openai', url: model.url } } } },
  });

/** Polls until the trace is no longer RUNNING (at most `ms`). */
async function ended(token: string, key: string, ms = 10_000) {
  for (const deadline = Date.now() + ms; ; await sleep(50)) {
    const trace = await request('GET', `/traces/${key}`, { token });
    if (trace.body.status !== 'RUNNING' || Date.now() > deadline) return trace;
  }
}

describe('an execution stopped from outside', () => {
  it('ends its invocation FAILED interrupted within seconds, audited, and frees the session', async () => {
    const { token, organizationId } = await newOrganization();
    await request('POST', '/webhooks', { token, body: { url: receiver.url } });
    model.enqueue(hang());
    expect((await run(token, 'stopped', 'stop-1', 0)).status).toBe(202);
    const invocation = (await getInvocation(organizationId, 'stop-1'))!;
    const arn = process.env.STATE_MACHINE_ARN!.replace(':stateMachine:', ':execution:');
    const sfn = new SFNClient({});

    await sfn.send(new StopExecutionCommand({ executionArn: `${arn}:${executionName(organizationId, invocation)}`, error: 'Operator', cause: 'stopped by hand' }));
    const trace = await ended(token, 'stop-1');

    expect(trace.body).toMatchObject({ status: 'FAILED', failure: { kind: 'interrupted', message: 'the execution was stopped' } });
    expect(trace.body.attempts.every((attempt: { status: string }) => attempt.status === 'FAILED')).toBe(true);
    const audit = await request('GET', '/sessions/stopped/audit', { token });
    expect(audit.body.events.map((event: { type: string }) => event.type)).toContain('run_failed');
    expect((await request('GET', '/sessions/stopped', { token })).body.session.state).toBe('IDLE');
    const [hook] = await receiver.waitFor(1, { filter: forKey('stop-1') });
    expect(JSON.parse(hook!.body)).toMatchObject({ type: 'invocation.failed', data: { status: 'FAILED', failure: { kind: 'interrupted', message: 'the execution was stopped' } } });
    expect((await run(token, 'stopped', 'stop-1', 5)).body).toMatchObject({ kind: 'interrupted' });
    model.enqueue(delay(10, answer('free again')));
    const next = await run(token, 'stopped', 'stop-2', 20);
    expect(next.status).toBe(200);
    expect(next.body.message.content).toBe('free again');
    sfn.destroy();
  });
});

describe('the settle-execution handler', () => {
  const change = (status: string, input: unknown) => ({
    source: 'aws.states',
    'detail-type': 'Step Functions Execution Status Change',
    detail: { executionArn: 'arn:aws:states:us-east-1:000000000000:execution:m:e', status, input: JSON.stringify(input), error: null },
  });

  it('leaves a succeeded execution, an ended invocation and an unknown one alone', async () => {
    const { token, organizationId } = await newOrganization();
    await request('POST', '/webhooks', { token, body: { url: receiver.url } });
    model.enqueue(answer('done'));
    expect((await run(token, 'settled', 'done-1', 20)).status).toBe(200);
    await receiver.waitFor(1, { filter: forKey('done-1') });

    expect(await handler(change('SUCCEEDED', { organization_id: organizationId, invocation_key: 'done-1' }))).toEqual({ settled: false });
    expect(await handler(change('FAILED', { organization_id: organizationId, invocation_key: 'done-1' }))).toEqual({ settled: false });
    expect(await handler(change('ABORTED', { organization_id: organizationId, invocation_key: 'never-ran' }))).toEqual({ settled: false });
    expect((await request('GET', '/traces/done-1', { token })).body.status).toBe('SUCCEEDED');
    // Finding the outcome recorded announces it again, which starts no second delivery.
    await sleep(1000);
    expect(receiver.received.filter(forKey('done-1'))).toHaveLength(1);
  });

  it('ignores events that are no execution status change, or name no invocation', async () => {
    expect(await handler({ source: 'aws.s3', 'detail-type': 'Object Created', detail: {} })).toEqual({ settled: false });
    expect(await handler(change('FAILED', 'not an object'))).toEqual({ settled: false });
    expect(await handler({ ...change('TIMED_OUT', {}), detail: { executionArn: 'x', status: 'TIMED_OUT', input: '{not json' } })).toEqual({ settled: false });
  });
});
