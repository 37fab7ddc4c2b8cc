import type { AgentConfig } from '#contracts/agent';
import { acceptRun } from '#core/runs';
import { acceptanceStore } from '#data/acceptance';
import { attemptStore } from '#data/attempts';
import { attemptStoreContract } from '../contracts/attempt-store';
import { newOrganization } from './support';

const agent: AgentConfig = { model: { name: 'gpt-test', provider: { name: 'openai' } } };

attemptStoreContract('DynamoDB', async () => {
  const { organizationId } = await newOrganization();
  const { invocation } = await acceptRun(acceptanceStore(organizationId), {
    organizationId, sessionId: 'contract', invocationKey: 'contract-1', rawBody: '{}', agentName: 'a', agent, userPrompt: 'question?',
  });
  return { store: attemptStore(organizationId), invocation };
});
