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
import { referencedSecrets, type AgentConfig } from '#contracts/agent';
import type { SpanRecorder } from '#functions/agent/types';
import type { MemoryGroupStore } from '#functions/agent/tools/types';
import { config } from '#kit/config';
import type { Logger } from '#kit/log';
import type { InvocationFacts, Message, Usage } from './model';
import { countOutcome, startNextAttempt, type AttemptStore } from './attempts';
import { totalUsage } from './usage';
import { announceOutcome } from './deliveries';
import { distillMemories, type DistillationStore } from './distill-memories';
import { InvocationEndedError, LimitReachedError } from './errors';
import { durationReached, invocationLimits, type InvocationLimits } from './limits';
import { measuredSpans, stepClock } from './run-metrics';
import { openToolbox } from './toolbox';
import { silenceWatchdog, type Watchdog } from './watchdog';

// A try that outlives this is retried by the provider; the watchdog bounds silence overall.
const MODEL_TRY_TIMEOUT_MS = 300_000;

/** How a successful attempt ends its invocation, written with the attempt's last spans. */
export interface AttemptSuccess {
  steps: number;
  /** This attempt's usage. */
  usage: Usage;
  /** The usage of every attempt, this one included (the audit event's). */
  totalUsage: Usage;
  answer: string;
  /** The cursor of the invocation's user message: the session's message count while it runs. */
  userCursor: number;
}

export interface RecorderOptions {
  /** Hold span ends for the next write instead of writing each at once. */
  holdEnds?: boolean;
  /** Called after every write that reached the store: the run made progress. */
  onWrite?(): void;
}

/**
 * The recorder of one attempt's spans. Every write holds only while the attempt runs
 * (InvocationEndedError otherwise), and with held ends a step costs two writes.
 */
export interface AttemptRecorder extends SpanRecorder {
  /** Holds the attempt's progress stamp (steps and usage so far) for the next write. */
  progress(progress: { steps: number; usage: Usage }): void;
  /** Writes whatever is held and waits for every payload to land. */
  flush(): Promise<void>;
  /**
   * Writes what is held with the attempt's success and the invocation's outcome (the
   * answer as the assistant message, the session released, `run_succeeded`), in one step.
   */
  succeed(success: AttemptSuccess): Promise<{ ended_at: string }>;
}

/** What a slice reads and writes, bound to one organization. */
export interface SliceStore {
  readonly attempts: AttemptStore;
  /** The configuration of an agent's revision. */
  agentConfig(agentName: string, revision: string): Promise<AgentConfig | undefined>;
  /** A session's first `count` messages, oldest first. */
  messages(sessionId: string, count: number): Promise<Message[]>;
  /** A secret's value; only a slice ever resolves one. */
  secretValue(name: string): Promise<string>;
  /** An attempt's checkpoint as its last slice saved it. */
  checkpoint(invocationKey: string, attempt: number): Promise<string | undefined>;
  saveCheckpoint(invocationKey: string, attempt: number, state: string): Promise<void>;
  recorder(invocation: InvocationFacts, attempt: number, options: RecorderOptions): AttemptRecorder;
  /** A memory group as this running invocation sees it. */
  memoryGroup(group: string, invocation: InvocationFacts): MemoryGroupStore & DistillationStore;
  /** URLs of the invocation's terminal workspace snapshot, valid for the seconds asked. */
  workspaceSnapshotUrls(invocationKey: string, seconds: number): Promise<{ get: string; put: string }>;
}

/** Whether another model call may start (the distillation's, after the final answer). */
function withinLimits(limits: InvocationLimits, usage: Usage): boolean {
  try {
    limits.check(usage);
    return true;
  } catch (error) {
    if (error instanceof LimitReachedError) return false;
    throw error;
  }
}

/** A provider's refusal no other attempt can change (bad credential, unknown model). */
export class ProviderRejectedError extends Error {
  override name = 'ProviderRejectedError';
}

/**
 * One slice's orders: the execution input, and either the attempt to resume from its last
 * slice's checkpoint, or the last attempt before the one to open.
 */
export type SliceInput = ExecutionInput & ({ resume: number } | { after: number });

async function resolveSecrets(store: SliceStore, names: string[]): Promise<Map<string, string>> {
  const values = await Promise.all(names.map(async (name) => [name, await store.secretValue(name)] as const));
  return new Map(values);
}

/** The session's messages before this invocation, and this invocation's prompt. */
async function conversation(store: SliceStore, input: SliceInput) {
  // The session is locked while the invocation runs: its own message is the last one.
  const messages = await store.messages(input.session_id, input.user_cursor);
  const own = messages.find((m) => m.cursor === input.user_cursor);
  const history = messages.filter((m) => m.cursor < input.user_cursor).map((m) => ({ role: m.role, content: m.content }));
  return { history, userPrompt: own?.content ?? '' };
}

/**
 * Runs the open attempt for one slice: at least one step, then more until it answers
 * (`done`: the outcome is recorded) or until half of `budgetMs` has passed (`continue`:
 * the state is checkpointed and the state machine calls again).
 */
export async function runAttemptSlice(store: SliceStore, input: SliceInput, budgetMs: number, log?: Logger): Promise<{ attempt: number; state: 'done' | 'continue' }> {
  const watchdog = silenceWatchdog(config.attemptTimeoutSeconds * 1000);
  try {
    return await Promise.race([slice(store, input, budgetMs, watchdog, log), watchdog.expired]);
  } catch (error) {
    // Whatever the slice failed with once the watchdog fired, silence is why.
    if (watchdog.signal.aborted) throw watchdog.signal.reason;
    throw error;
  } finally {
    watchdog.stop();
  }
}

async function slice(store: SliceStore, input: SliceInput, budgetMs: number, watchdog: Watchdog, log?: Logger): Promise<{ attempt: number; state: 'done' | 'continue' }> {
  const { organization_id: organizationId, invocation_key: invocationKey } = input;
  const signal = watchdog.signal;
  const deadline = Date.now() + budgetMs / 2;
  const invocation: InvocationFacts = input;
  const resumed = 'resume' in input ? input.resume : undefined;
  const after = 'after' in input ? input.after : 0;
  // The configuration is read beside the session's messages (or the resumed attempt's
  // checkpoint and the earlier attempts); its limits are checked before an attempt opens.
  const [agent, saved, talk, attempts] = await Promise.all([
    store.agentConfig(input.agent_name, input.agent_revision),
    resumed === undefined ? undefined : store.checkpoint(invocationKey, resumed),
    resumed === undefined ? conversation(store, input) : undefined,
    (resumed ?? after + 1) > 1 ? store.attempts.attempts(invocationKey) : [],
  ]);
  if (!agent) throw new Error(`revision ${input.agent_revision} of ${input.agent_name} is missing`);
  const earlier = attempts.filter((a) => a.number < (resumed ?? after + 1));
  const limits = invocationLimits(agent, invocation.started_at, totalUsage(earlier));
  if (resumed === undefined) limits.check({ input_tokens: 0, output_tokens: 0 });
  if (limits.deadline !== undefined) watchdog.until(limits.deadline, durationReached(agent.limits!.max_duration_seconds!));
  const attempt = resumed ?? (await startNextAttempt(store.attempts, invocationKey, { invocation, after }));
  // The attempt's own record is written (or read back): as much progress as a span.
  watchdog.progress();
  if (resumed !== undefined && saved === undefined) throw new Error(`attempt ${attempt} of ${invocationKey} has no checkpoint to resume from`);

  const secrets = await resolveSecrets(store, referencedSecrets(agent));
  const redactor = createRedactor(secrets);
  const credential = agent.model.provider.credential ? resolveReferences(agent.model.provider.credential, secrets) : undefined;
  const provider = createProvider(agent.model.provider, credential, { timeoutMs: MODEL_TRY_TIMEOUT_MS });
  const spans = measuredSpans(store.recorder(invocation, attempt, { holdEnds: true, onWrite: () => watchdog.progress() }));
  const memories = agent.memory ? store.memoryGroup(agent.memory.group, invocation) : undefined;

  const toolbox = await openToolbox(agent, {
    organizationId, invocationKey, secrets, redactor, signal, log,
    ...(memories ? { memories } : {}),
    workspaceSnapshotUrls: (seconds) => store.workspaceSnapshotUrls(invocationKey, seconds),
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
        beforeModelCall: (state) => limits.check(state.usage),
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
      await Promise.all([store.saveCheckpoint(invocationKey, attempt, JSON.stringify(result.state)), spans.flush()]);
      return { attempt, state: 'continue' };
    }
    let final = result.state;
    if (memories && agent.memory?.generation?.includes('session') && withinLimits(limits, final.usage)) {
      // The distillation's span and usage count for the attempt.
      final = await distillMemories(final, { memories, provider, model: agent.model.name, spans, redactor, signal, log });
    }
    const usage = totalUsage([...earlier, { usage: final.usage }]);
    const { ended_at } = await spans.succeed({
      steps: final.steps,
      usage: final.usage,
      totalUsage: usage,
      answer: final.answer ?? '',
      userCursor: input.user_cursor,
    });
    countOutcome();
    // The outcome is visible and the session free already; the announcement only starts deliveries.
    const model = { provider: agent.model.provider.name, name: agent.model.name };
    await announceOutcome(store.attempts.deliveries, { ...invocation, status: 'SUCCEEDED', ended_at, usage, model });
    return { attempt, state: 'done' };
  } catch (error) {
    if (signal.aborted && !(error instanceof InvocationEndedError)) throw signal.reason;
    throw error;
  } finally {
    await toolbox.close();
  }
}
