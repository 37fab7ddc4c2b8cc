import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AgentConfig } from '#contracts/agent';
import { ConflictError, InvalidInputError, LockedError, QuotaExceededError } from '#core/errors';
import { acceptanceStore } from '#data/acceptance';
import { acceptRun, recordRunRevision, type RunRequest } from '#core/runs';
import { getRevision } from '#data/agents';
import { getSession } from '#data/invocations';
import { newOrganization, request as http } from './support';

// The acceptance transaction against DynamoDB Local, in this process: the HTTP route
// arrives with the state machine; these are the rules it will stand on.
const agent: AgentConfig = { model: { name: 'gpt-test', provider: { name: 'openai', url: 'http://127.0.0.1:9/v1' } } };

function run(organizationId: string, overrides: Partial<RunRequest> = {}): RunRequest {
  const body = { user_prompt: 'hello', agent_name: 'helper', agent };
  return {
    organizationId,
    sessionId: 'session-1',
    invocationKey: 'key-1',
    rawBody: JSON.stringify(body),
    agentName: body.agent_name,
    agent,
    userPrompt: body.user_prompt,
    ...overrides,
  };
}

describe('acceptRun', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('accepts a first run: locks the session; its revision is recorded', async () => {
    const { organizationId } = await newOrganization();

    const { invocation, created } = await acceptRun(acceptanceStore(organizationId), run(organizationId));

    expect(created).toBe(true);
    expect(invocation).toMatchObject({ status: 'RUNNING', session_position: 1, agent_name: 'helper' });
    expect(await getSession(organizationId, 'session-1')).toMatchObject({ state: 'RUNNING', current_invocation_key: 'key-1', invocation_count: 1, message_count: 1 });
    await recordRunRevision(acceptanceStore(organizationId), run(organizationId), invocation);
    expect((await getRevision(organizationId, 'helper', invocation.agent_revision))?.config).toEqual(agent);
  });

  it('turns 20 simultaneous identical requests into one invocation', async () => {
    const { organizationId } = await newOrganization();

    const results = await Promise.all(Array.from({ length: 20 }, () => acceptRun(acceptanceStore(organizationId), run(organizationId))));

    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.invocation.started_at)).size).toBe(1);
    expect((await getSession(organizationId, 'session-1'))?.invocation_count).toBe(1);
  });

  it('lets exactly one of 20 simultaneous keys run in a session; the rest are locked out', async () => {
    const { organizationId } = await newOrganization();

    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => acceptRun(acceptanceStore(organizationId), run(organizationId, { invocationKey: `key-${i}` }))));

    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const refusals = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(refusals).toHaveLength(19);
    for (const refusal of refusals) expect(refusal.reason).toBeInstanceOf(LockedError);
  });

  it('refuses a reused key with another body or on another session (409)', async () => {
    const { organizationId } = await newOrganization();
    await acceptRun(acceptanceStore(organizationId), run(organizationId));

    await expect(acceptRun(acceptanceStore(organizationId), run(organizationId, { rawBody: '{"other": true}' }))).rejects.toBeInstanceOf(ConflictError);
    await expect(acceptRun(acceptanceStore(organizationId), run(organizationId, { sessionId: 'session-2' }))).rejects.toBeInstanceOf(ConflictError);
  });

  it('answers 429 once the quota is used up, changing nothing', async () => {
    const { organizationId } = await newOrganization();
    vi.stubEnv('INVOCATION_QUOTA', '1');
    await acceptRun(acceptanceStore(organizationId), run(organizationId, { sessionId: 'a' }));

    await expect(acceptRun(acceptanceStore(organizationId), run(organizationId, { sessionId: 'b', invocationKey: 'key-b' }))).rejects.toBeInstanceOf(QuotaExceededError);
    expect(await getSession(organizationId, 'b')).toBeUndefined();
  });

  it('refuses a reference to a secret the organization does not have', async () => {
    const { organizationId, token } = await newOrganization();
    const withSecret: AgentConfig = { model: { name: 'm', provider: { name: 'openai', credential: '{{secret:MISSING}}' } } };

    await expect(acceptRun(acceptanceStore(organizationId), run(organizationId, { agent: withSecret }))).rejects.toBeInstanceOf(InvalidInputError);
    await http('POST', '/secrets', { token, body: { name: 'MISSING', value: 'now-it-exists' } });
    await expect(acceptRun(acceptanceStore(organizationId), run(organizationId, { agent: withSecret }))).resolves.toMatchObject({ created: true });
  });

  it('keeps one organization keys apart from another one', async () => {
    const first = await newOrganization();
    const second = await newOrganization();
    await acceptRun(acceptanceStore(first.organizationId), run(first.organizationId));

    await expect(acceptRun(acceptanceStore(second.organizationId), run(second.organizationId))).resolves.toMatchObject({ created: true });
  });
});
