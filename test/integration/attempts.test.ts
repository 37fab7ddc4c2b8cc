import { describe, expect, it } from 'vitest';
import type { AgentConfig } from '#contracts/agent';
import { attemptStore } from '#data/attempts';
import { classify, finishInvocation, settleFailedAttempt, startNextAttempt } from '#core/attempts';
import { acceptanceStore } from '#data/acceptance';
import { acceptRun } from '#core/runs';
import { endAttempt, listAttempts } from '#data/attempts';
import { getInvocation, getSession } from '#data/invocations';
import { spanStore } from '#data/spans';
import { InvocationEndedError } from '#core/errors';
import { queryPrefix } from '#data/dynamo';
import { keys } from '#data/keys';
import { newOrganization } from './support';

const agent: AgentConfig = { model: { name: 'gpt-test', provider: { name: 'openai' } } };

async function accepted(sessionId = 's1', invocationKey = 'k1') {
  const { organizationId } = await newOrganization();
  await acceptRun(acceptanceStore(organizationId), { organizationId, sessionId, invocationKey, rawBody: '{}', agentName: 'a', agent, userPrompt: 'question?' });
  return { organizationId, sessionId, invocationKey };
}

async function sessionRecords(organizationId: string, sessionId: string) {
  const messages = await queryPrefix(keys.messagesOf(organizationId, sessionId), { consistent: true });
  const audit = await queryPrefix(keys.auditOf(organizationId, sessionId), { consistent: true });
  return { messages: messages.map((m) => [m.cursor, m.role, m.content]), audit: audit.map((e) => e.event_type) };
}

describe('classify', () => {
  it.each([
    [{ Error: 'Runtime.ExitError' }, 'crash', true],
    [{ Error: 'States.Timeout' }, 'no_progress', true],
    [{ Error: 'ProviderError', Cause: '{"errorMessage":"model endpoint answered 500","errorType":"ProviderError"}' }, 'interrupted', true],
    [{ Error: 'MaxStepsError', Cause: '{"errorMessage":"max_steps (3) reached"}' }, 'interrupted', false],
  ])('%j is %s (retry %s)', (error, kind, retry) => {
    const verdict = classify(error);
    expect(verdict.failure.kind).toBe(kind);
    expect(verdict.retry).toBe(retry);
  });

  it('keeps the cause message of the harness own errors', () => {
    expect(classify({ Error: 'MaxStepsError', Cause: '{"errorMessage":"max_steps (3) reached"}' }).failure.message).toBe('max_steps (3) reached');
  });
});

describe('the attempt lifecycle', () => {
  it('retries after a timeout, then succeeds with the last attempt answer only', async () => {
    const { organizationId, sessionId, invocationKey } = await accepted();

    expect(await startNextAttempt(attemptStore(organizationId), invocationKey)).toBe(1);
    expect((await settleFailedAttempt(attemptStore(organizationId), invocationKey, { Error: 'States.Timeout' })).retry).toBe(true);
    expect(await startNextAttempt(attemptStore(organizationId), invocationKey)).toBe(2);
    await endAttempt(organizationId, invocationKey, 2, { status: 'SUCCEEDED', answer: 'the answer', ended_at: new Date().toISOString() });
    await finishInvocation(attemptStore(organizationId), invocationKey, { Error: 'States.Timeout' });

    const invocation = await getInvocation(organizationId, invocationKey);
    expect(invocation).toMatchObject({ status: 'SUCCEEDED' });
    expect(invocation?.failure).toBeUndefined();
    expect((await listAttempts(organizationId, invocationKey)).map((a) => [a.number, a.status, a.failure?.kind])).toEqual([
      [1, 'FAILED', 'no_progress'],
      [2, 'SUCCEEDED', undefined],
    ]);
    expect(await getSession(organizationId, sessionId)).toMatchObject({ state: 'IDLE', message_count: 2 });
    expect((await getSession(organizationId, sessionId))?.current_invocation_key).toBeUndefined();
    expect(await sessionRecords(organizationId, sessionId)).toEqual({
      messages: [[1, 'user', 'question?'], [2, 'assistant', 'the answer']],
      audit: ['agent_invocation', 'run_succeeded'],
    });
  });

  it('fails with the last attempt failure once MAX_ATTEMPTS have run', async () => {
    const { organizationId, sessionId, invocationKey } = await accepted();

    for (let attempt = 1; attempt <= 3; attempt++) {
      expect(await startNextAttempt(attemptStore(organizationId), invocationKey)).toBe(attempt);
      expect((await settleFailedAttempt(attemptStore(organizationId), invocationKey, { Error: 'Runtime.ExitError' })).retry).toBe(attempt < 3);
    }
    await finishInvocation(attemptStore(organizationId), invocationKey);

    expect(await getInvocation(organizationId, invocationKey)).toMatchObject({ status: 'FAILED', failure: { kind: 'crash' } });
    expect((await sessionRecords(organizationId, sessionId)).audit).toEqual(['agent_invocation', 'run_failed']);
    expect((await getSession(organizationId, sessionId))?.state).toBe('IDLE');
  });

  it('does not retry what another attempt cannot fix', async () => {
    const { organizationId, invocationKey } = await accepted();
    await startNextAttempt(attemptStore(organizationId), invocationKey);

    expect((await settleFailedAttempt(attemptStore(organizationId), invocationKey, { Error: 'MaxStepsError', Cause: '{"errorMessage":"max_steps (2) reached"}' })).retry).toBe(false);
    await finishInvocation(attemptStore(organizationId), invocationKey);

    expect(await getInvocation(organizationId, invocationKey)).toMatchObject({ status: 'FAILED', failure: { kind: 'interrupted', message: 'max_steps (2) reached' } });
  });

  it('ends an attempt cut off by a restart as interrupted and opens the next', async () => {
    const { organizationId, invocationKey } = await accepted();
    await startNextAttempt(attemptStore(organizationId), invocationKey);

    // The execution starts over after a restart: StartAttempt finds attempt 1 still open.
    expect(await startNextAttempt(attemptStore(organizationId), invocationKey)).toBe(2);

    expect((await listAttempts(organizationId, invocationKey)).map((a) => [a.status, a.failure?.kind])).toEqual([
      ['FAILED', 'interrupted'],
      ['RUNNING', undefined],
    ]);
  });

  it('records internal when no attempt could start, and recording twice changes nothing', async () => {
    const { organizationId, sessionId, invocationKey } = await accepted();

    await finishInvocation(attemptStore(organizationId), invocationKey, { Error: 'Lambda.ServiceException' });
    await finishInvocation(attemptStore(organizationId), invocationKey, { Error: 'Lambda.ServiceException' });

    expect(await getInvocation(organizationId, invocationKey)).toMatchObject({ status: 'FAILED', failure: { kind: 'internal' } });
    expect((await sessionRecords(organizationId, sessionId)).audit).toEqual(['agent_invocation', 'run_failed']);
  });

  it('lets the session take its next invocation after the outcome', async () => {
    const { organizationId, sessionId, invocationKey } = await accepted();
    await finishInvocation(attemptStore(organizationId), invocationKey, { Error: 'x' });

    const next = await acceptRun(acceptanceStore(organizationId), { organizationId, sessionId, invocationKey: 'k2', rawBody: '{}', agentName: 'a', agent, userPrompt: 'again' });

    expect(next.invocation.session_position).toBe(2);
  });

  it('records no span or audit event once the invocation has ended (a harness outliving its run)', async () => {
    const { organizationId, sessionId, invocationKey } = await accepted();
    await startNextAttempt(attemptStore(organizationId), invocationKey);
    const spans = spanStore(organizationId, (await getInvocation(organizationId, invocationKey))!, 1);
    await spans.start({ id: 'inv-1.att-1.1', type: 'model_call', name: 'm', parent_id: null, input: {} });
    await finishInvocation(attemptStore(organizationId), invocationKey, { Error: 'SessionDeleted' });

    await expect(spans.end('inv-1.att-1.1', { status: 'SUCCEEDED', output: {}, usage: null })).rejects.toBeInstanceOf(InvocationEndedError);
    await expect(spans.start({ id: 'inv-1.att-1.2', type: 'model_call', name: 'm', parent_id: null, input: {} })).rejects.toBeInstanceOf(InvocationEndedError);

    expect((await queryPrefix(keys.spansOf(organizationId, invocationKey), { consistent: true })).map((span) => [span.id, span.status])).toEqual([
      ['inv-1.att-1.1', 'RUNNING'],
    ]);
    expect((await sessionRecords(organizationId, sessionId)).audit).toEqual(['agent_invocation', 'run_failed']);
  });

  it('records nothing more for an attempt once it was settled, while the invocation runs on with the next attempt', async () => {
    const { organizationId, sessionId, invocationKey } = await accepted();
    await startNextAttempt(attemptStore(organizationId), invocationKey);
    const invocation = (await getInvocation(organizationId, invocationKey))!;
    const first = spanStore(organizationId, invocation, 1, { holdEnds: true });
    await first.start({ id: 'inv-1.att-1.1', type: 'model_call', name: 'm', parent_id: null, input: {} });
    expect((await settleFailedAttempt(attemptStore(organizationId), invocationKey, { Error: 'NoProgressError' })).retry).toBe(true);
    await startNextAttempt(attemptStore(organizationId), invocationKey);

    // The settled attempt's harness, still at work: its held end and its next start are refused together.
    await first.end('inv-1.att-1.1', { status: 'SUCCEEDED', output: {}, usage: null });
    await expect(first.start({ id: 'inv-1.att-1.2', type: 'tool_call', name: 't', parent_id: 'inv-1.att-1.1', input: {} })).rejects.toBeInstanceOf(InvocationEndedError);
    const second = spanStore(organizationId, invocation, 2, { holdEnds: true });
    await second.start({ id: 'inv-1.att-2.1', type: 'model_call', name: 'm', parent_id: null, input: {} });
    await second.flush();

    expect((await getInvocation(organizationId, invocationKey))!.status).toBe('RUNNING');
    expect((await queryPrefix(keys.spansOf(organizationId, invocationKey), { consistent: true })).map((span) => [span.id, span.status])).toEqual([
      ['inv-1.att-1.1', 'RUNNING'],
      ['inv-1.att-2.1', 'RUNNING'],
    ]);
    expect((await listAttempts(organizationId, invocationKey)).map((a) => [a.number, a.status, a.steps ?? 0])).toEqual([
      [1, 'FAILED', 0],
      [2, 'RUNNING', 0],
    ]);
    expect((await sessionRecords(organizationId, sessionId)).audit).toEqual(['agent_invocation']);
  });
});
