/**
 * The RunSteps task's work: one slice of an attempt. It rebuilds the agent from the
 * revision's configuration, resolves secret references only here, resumes the attempt
 * from its checkpoint and runs steps until the answer or the slice's time budget,
 * checkpointing after every step so the next slice (or nothing, on a crash) loses nothing.
 */
import { createRedactor, resolveReferences } from '#functions/agent/secrets';
import { runSteps, startAttempt, type AttemptState } from '#functions/agent/loop';
import { ProviderError } from '#functions/agent/errors';
import { answerValidator } from '#functions/agent/output-format';
import { createProvider } from '#functions/agent/providers/index';
import { referencedSecrets } from '#contracts/agent';
import { getRevision } from '#data/agents';
import { endAttempt, listAttempts, recordProgress } from '#data/attempts';
import { queryPrefix } from '#data/dynamo';
import { getInvocation, type Invocation } from '#data/invocations';
import { keys } from '#data/keys';
import { checkpointKey, getJson, putJson } from '#data/payloads';
import { readSecretValue } from '#data/secret-values';
import { spanStore } from '#data/spans';
import { config } from './config';
import { distillMemories } from './distill-memories';
import { InvocationEndedError } from './errors';
import type { Logger } from './log';
import { openToolbox } from './toolbox';

const MODEL_TRY_TIMEOUT_MS = 300_000;

/** A provider's refusal no other attempt can change (bad credential, unknown model). */
export class ProviderRejectedError extends Error {
  override name = 'ProviderRejectedError';
}

async function resolveSecrets(organizationId: string, names: string[]): Promise<Map<string, string>> {
  const values = await Promise.all(names.map(async (name) => [name, await readSecretValue(organizationId, name)] as const));
  return new Map(values);
}

/** The session's messages before this invocation, and this invocation's prompt. */
async function conversation(organizationId: string, invocation: Invocation) {
  const messages = await queryPrefix(keys.messagesOf(organizationId, invocation.session_id), { consistent: true });
  const own = messages.find((m) => m.invocation_key === invocation.invocation_key && m.role === 'user');
  const history = messages
    .filter((m) => (m.cursor as number) < ((own?.cursor as number) ?? Infinity))
    .map((m) => ({ role: m.role as 'user' | 'assistant', content: m.content as string }));
  return { history, userPrompt: (own?.content as string) ?? '' };
}

/**
 * Runs the open attempt until it answers (`done`) or until half of the time it may take
 * has passed (`continue`; the state machine calls again).
 */
export async function runAttemptSlice(
  organizationId: string,
  invocationKey: string,
  budgetMs: number,
  signal: AbortSignal,
  log?: Logger,
): Promise<'done' | 'continue'> {
  const invocation = await getInvocation(organizationId, invocationKey);
  if (invocation?.status !== 'RUNNING') throw new InvocationEndedError(`invocation ${invocationKey} is no longer running`);
  const attempt = (await listAttempts(organizationId, invocationKey)).findLast((a) => a.status === 'RUNNING');
  if (!attempt) throw new InvocationEndedError(`invocation ${invocationKey} has no open attempt`);
  const revision = await getRevision(organizationId, invocation.agent_name, invocation.agent_revision);
  if (!revision) throw new Error(`revision ${invocation.agent_revision} of ${invocation.agent_name} is missing`);
  const agent = revision.config;

  const secrets = await resolveSecrets(organizationId, referencedSecrets(agent));
  const redactor = createRedactor(secrets);
  const credential = agent.model.provider.credential ? resolveReferences(agent.model.provider.credential, secrets) : undefined;
  // A try never outlives the attempt's silence watchdog: a model that hangs is the
  // watchdog's to stop (no_progress), not something to retry inside the attempt.
  const timeoutMs = Math.min(MODEL_TRY_TIMEOUT_MS, config.attemptTimeoutSeconds * 1000);
  const provider = createProvider(agent.model.provider, credential, { timeoutMs });

  const toolbox = await openToolbox(agent, { organizationId, invocation, secrets, redactor, signal, log });
  try {
    const checkpoint = checkpointKey(organizationId, invocationKey, attempt.number);
    const saveProgress = async (next: AttemptState) => {
      await Promise.all([
        putJson(checkpoint, JSON.stringify(next)),
        recordProgress(organizationId, invocationKey, attempt.number, { steps: next.steps, usage: next.usage }),
      ]);
    };
    // The system prompt is fixed when the attempt starts (memories included) and checkpointed.
    const newAttemptState = async () => {
      const systemPrompt = [agent.system_prompt, ...(await toolbox.instructions())].filter((part) => part !== undefined && part !== '').join('\n\n');
      return startAttempt({
        sessionPosition: invocation.session_position,
        attempt: attempt.number,
        ...(systemPrompt ? { systemPrompt } : {}),
        ...(await conversation(organizationId, invocation)),
      });
    };
    const saved = await getJson(checkpoint);
    const state: AttemptState = saved ? (JSON.parse(saved) as AttemptState) : await newAttemptState();

    const result = await runSteps(state, {
      provider,
      model: agent.model.name,
      tools: toolbox.tools,
      maxSteps: agent.max_steps ?? 20,
      spans: spanStore(organizationId, invocation),
      redactor,
      // Stop starting steps halfway through the budget: a step under way needs room to finish.
      deadline: Date.now() + budgetMs / 2,
      // Independent writes: made together, since every step waits for both.
      onStep: (next) => saveProgress(next),
      signal,
      log,
      ...(agent.output_format?.type === 'json_schema'
        ? { responseFormat: { type: 'json_schema', schema: agent.output_format.schema }, validateAnswer: answerValidator(agent.output_format) }
        : {}),
    }).catch((error: unknown) => {
      if (error instanceof ProviderError && !error.retryable) throw new ProviderRejectedError(error.message);
      throw error;
    });
    if (result.outcome === 'continue') return 'continue';
    if (agent.memory?.generation?.includes('session')) {
      const distilled = await distillMemories(result.state, {
        organizationId, invocation, group: agent.memory.group, provider, model: agent.model.name,
        spans: spanStore(organizationId, invocation), redactor, signal, log,
      });
      // The distillation's span seq and usage count for the attempt, and a retried slice starts after it.
      await saveProgress(distilled);
    }
    await endAttempt(organizationId, invocationKey, attempt.number, {
      status: 'SUCCEEDED',
      answer: result.state.answer ?? '',
      ended_at: new Date().toISOString(),
    });
    return 'done';
  } finally {
    await toolbox.close();
  }
}
