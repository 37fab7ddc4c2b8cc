/**
 * The RunSteps task's work: one slice of an attempt. It rebuilds the agent from the
 * revision's configuration, resolves secret references only here, opens the attempt (or
 * resumes it from the checkpoint of its last slice) and runs steps until the answer or
 * the slice's time budget. A successful attempt records the invocation's outcome with its
 * last spans, in one transaction.
 *
 * Silence, not slice length, is what ends an attempt that hangs: the watchdog aborts
 * everything in flight once nothing was recorded for ATTEMPT_TIMEOUT_SECONDS.
 */
import { createRedactor, resolveReferences } from '#functions/agent/secrets';
import { runSteps, startAttempt, type AttemptState } from '#functions/agent/loop';
import { ProviderError } from '#functions/agent/errors';
import { answerValidator } from '#functions/agent/output-format';
import { createProvider } from '#functions/agent/providers/index';
import type { ExecutionInput } from '#functions/workflow/definition';
import { referencedSecrets } from '#contracts/agent';
import { getRevision } from '#data/agents';
import { attemptStore, listAttempts } from '#data/attempts';
import type { InvocationFacts } from '#core/model';
import { memoryGroupStore } from '#data/memories';
import { listMessages } from '#data/messages';
import { checkpointKey, getJson, putJson, workspaceSnapshotUrls } from '#data/payloads';
import { readSecretValue } from '#data/secret-values';
import { spanStore } from '#data/spans';
import { countOutcome, startNextAttempt, totalUsage } from './attempts';
import { config } from '#kit/config';
import { distillMemories } from './distill-memories';
import { InvocationEndedError } from './errors';
import type { Logger } from '#kit/log';
import { measuredSpans, stepClock } from './run-metrics';
import { openToolbox } from './toolbox';
import { silenceWatchdog, type Watchdog } from './watchdog';

// A try that outlives this is retried by the provider; the watchdog bounds silence overall.
const MODEL_TRY_TIMEOUT_MS = 300_000;

/** A provider's refusal no other attempt can change (bad credential, unknown model). */
export class ProviderRejectedError extends Error {
  override name = 'ProviderRejectedError';
}

/**
 * One slice's orders: the execution input, and either the attempt to resume from its last
 * slice's checkpoint, or the last attempt before the one to open.
 */
export type SliceInput = ExecutionInput & ({ resume: number } | { after: number });

async function resolveSecrets(organizationId: string, names: string[]): Promise<Map<string, string>> {
  const values = await Promise.all(names.map(async (name) => [name, await readSecretValue(organizationId, name)] as const));
  return new Map(values);
}

/** The session's messages before this invocation, and this invocation's prompt. */
async function conversation(input: SliceInput) {
  // The session is locked while the invocation runs: its own message is the last one.
  const { messages } = await listMessages(input.organization_id, input.session_id, 0, input.user_cursor);
  const own = messages.find((m) => m.cursor === input.user_cursor);
  const history = messages.filter((m) => m.cursor < input.user_cursor).map((m) => ({ role: m.role, content: m.content }));
  return { history, userPrompt: own?.content ?? '' };
}

/**
 * Runs the open attempt for one slice: at least one step, then more until it answers
 * (`done`: the outcome is recorded) or until half of `budgetMs` has passed (`continue`:
 * the state is checkpointed and the state machine calls again).
 */
export async function runAttemptSlice(input: SliceInput, budgetMs: number, log?: Logger): Promise<{ attempt: number; state: 'done' | 'continue' }> {
  const watchdog = silenceWatchdog(config.attemptTimeoutSeconds * 1000);
  try {
    return await Promise.race([slice(input, budgetMs, watchdog, log), watchdog.expired]);
  } catch (error) {
    // Whatever the slice failed with once the watchdog fired, silence is why.
    if (watchdog.signal.aborted) throw watchdog.signal.reason;
    throw error;
  } finally {
    watchdog.stop();
  }
}

async function slice(input: SliceInput, budgetMs: number, watchdog: Watchdog, log?: Logger): Promise<{ attempt: number; state: 'done' | 'continue' }> {
  const { organization_id: organizationId, invocation_key: invocationKey } = input;
  const signal = watchdog.signal;
  const deadline = Date.now() + budgetMs / 2;
  const invocation: InvocationFacts = input;
  const resumed = 'resume' in input ? input.resume : undefined;
  // A new attempt is opened beside reading the session's messages; a resumed one starts from its checkpoint.
  const [attempt, revision, saved, talk] = await Promise.all([
    resumed ?? startNextAttempt(attemptStore(organizationId), invocationKey, { invocation, after: 'after' in input ? input.after : 0 }),
    getRevision(organizationId, input.agent_name, input.agent_revision),
    resumed === undefined ? undefined : getJson(checkpointKey(organizationId, invocationKey, resumed)),
    resumed === undefined ? conversation(input) : undefined,
  ]);
  // The attempt's own record is written (or read back): as much progress as a span.
  watchdog.progress();
  const checkpoint = checkpointKey(organizationId, invocationKey, attempt);
  if (!revision) throw new Error(`revision ${input.agent_revision} of ${input.agent_name} is missing`);
  if (resumed !== undefined && saved === undefined) throw new Error(`attempt ${attempt} of ${invocationKey} has no checkpoint to resume from`);
  const agent = revision.config;

  const secrets = await resolveSecrets(organizationId, referencedSecrets(agent));
  const redactor = createRedactor(secrets);
  const credential = agent.model.provider.credential ? resolveReferences(agent.model.provider.credential, secrets) : undefined;
  const provider = createProvider(agent.model.provider, credential, { timeoutMs: MODEL_TRY_TIMEOUT_MS });
  const spans = measuredSpans(spanStore(organizationId, invocation, attempt, { holdEnds: true, onWrite: () => watchdog.progress() }));

  const toolbox = await openToolbox(agent, {
    organizationId, invocationKey, secrets, redactor, signal, log,
    ...(agent.memory ? { memories: memoryGroupStore(organizationId, agent.memory.group, invocation) } : {}),
    workspaceSnapshotUrls: (seconds) => workspaceSnapshotUrls(organizationId, invocationKey, seconds),
  });
  try {
    // The system prompt is fixed when the attempt starts (memories included) and checkpointed.
    const newAttemptState = async (start: Awaited<ReturnType<typeof conversation>>) => {
      const systemPrompt = [agent.system_prompt, ...(await toolbox.instructions())].filter((part) => part !== undefined && part !== '').join('\n\n');
      return startAttempt({ sessionPosition: input.session_position, attempt, ...(systemPrompt ? { systemPrompt } : {}), ...start });
    };
    const state: AttemptState = saved !== undefined ? (JSON.parse(saved) as AttemptState) : await newAttemptState(talk!);

    let result;
    const stepEnded = stepClock();
    try {
      result = await runSteps(state, {
        provider,
        model: agent.model.name,
        tools: toolbox.tools,
        maxSteps: agent.max_steps ?? 20,
        spans,
        redactor,
        deadline,
        // The progress stamp rides on the step's next write.
        onStep: async (next) => {
          stepEnded();
          spans.progress({ steps: next.steps, usage: next.usage });
        },
        signal,
        log,
        ...(agent.output_format?.type === 'json_schema'
          ? { responseFormat: { type: 'json_schema', schema: agent.output_format.schema }, validateAnswer: answerValidator(agent.output_format) }
          : {}),
      });
    } catch (error) {
      // The spans the failure cut short are recorded (FAILED) before the attempt is settled.
      await spans.flush().catch(() => undefined);
      if (error instanceof ProviderError && !error.retryable) throw new ProviderRejectedError(error.message);
      throw error;
    }
    if (result.outcome === 'continue') {
      // The next slice (another process) resumes from here; nothing else ever reads it.
      await Promise.all([putJson(checkpoint, JSON.stringify(result.state)), spans.flush()]);
      return { attempt, state: 'continue' };
    }
    let final = result.state;
    if (agent.memory?.generation?.includes('session')) {
      // The distillation's span and usage count for the attempt.
      final = await distillMemories(final, {
        organizationId, invocation, group: agent.memory.group, provider, model: agent.model.name, spans, redactor, signal, log,
      });
    }
    const earlier = attempt > 1 ? (await listAttempts(organizationId, invocationKey)).filter((a) => a.number < attempt) : [];
    await spans.succeed({
      steps: final.steps,
      usage: final.usage,
      totalUsage: totalUsage([...earlier, { usage: final.usage }]),
      answer: final.answer ?? '',
      userCursor: input.user_cursor,
    });
    countOutcome();
    return { attempt, state: 'done' };
  } catch (error) {
    if (signal.aborted && !(error instanceof InvocationEndedError)) throw signal.reason;
    throw error;
  } finally {
    await toolbox.close();
  }
}
