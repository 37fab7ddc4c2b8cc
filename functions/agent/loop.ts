/**
 * The agent loop as a resumable step function. One step is one model call plus the tool
 * calls it requested. After every step the caller checkpoints the (plain JSON) state, so
 * a run can stop near a deadline and continue in another process, its span numbering
 * carrying on.
 */
import type { Logger } from '#kit/log';
import { MaxStepsError } from './errors';
import {
  spanId,
  type ConversationMessage,
  type ModelProvider,
  type ModelResponse,
  type Redactor,
  type ResponseFormat,
  type SpanRecorder,
  type Tool,
  type ToolCall,
  type Usage,
} from './types';

/** Everything needed to continue an attempt; JSON-serializable. */
export interface AttemptState {
  session_position: number;
  attempt: number;
  system?: string;
  /** The conversation so far: earlier session messages, this prompt, then every step (redacted). */
  messages: ConversationMessage[];
  /** Model calls made in this attempt (what `max_steps` counts). */
  steps: number;
  /** The seq of the next span id of this attempt. */
  next_seq: number;
  usage: Usage;
  /** The final answer, redacted; null until the model gives one. */
  answer: string | null;
}

export interface AttemptStart {
  sessionPosition: number;
  attempt: number;
  systemPrompt?: string;
  /** Earlier messages of the session, oldest first. */
  history: { role: 'user' | 'assistant'; content: string }[];
  userPrompt: string;
}

export interface StepDeps {
  provider: ModelProvider;
  model: string;
  tools: Tool[];
  maxSteps: number;
  spans: SpanRecorder;
  redactor: Redactor;
  /** Epoch ms after which no new step starts (but the first); a step under way finishes. */
  deadline: number;
  /** Checkpoint hook, called after every step with the new state. */
  onStep(state: AttemptState): Promise<void>;
  signal: AbortSignal;
  responseFormat?: ResponseFormat;
  /** Checks a final answer; a returned message is sent to the model as a user message and the loop goes on. */
  validateAnswer?(text: string): string | undefined;
  /** Called before every model call with the state so far; throws to stop the attempt (a limit reached). */
  beforeModelCall?(state: AttemptState): void;
  log?: Logger;
}

export interface StepsResult {
  state: AttemptState;
  /** `done`: `state.answer` holds the final answer; `continue`: the deadline came first. */
  outcome: 'done' | 'continue';
}

/** The state of a new attempt, before its first step. */
export function startAttempt(input: AttemptStart): AttemptState {
  return {
    session_position: input.sessionPosition,
    attempt: input.attempt,
    ...(input.systemPrompt !== undefined ? { system: input.systemPrompt } : {}),
    messages: [...input.history.map((m) => ({ role: m.role, content: m.content })), { role: 'user', content: input.userPrompt }],
    steps: 0,
    next_seq: 1,
    usage: { input_tokens: 0, output_tokens: 0 },
    answer: null,
  };
}

/** Runs at least one step, then more until the final answer (`done`) or the deadline (`continue`); throws `MaxStepsError`, `ProviderError`. */
export async function runSteps(initial: AttemptState, deps: StepDeps): Promise<StepsResult> {
  let state = initial;
  // A call always makes at least one step: a deadline already passed must not return
  // `continue` forever without progress.
  for (let stepped = false; state.answer === null; stepped = true) {
    if (state.steps >= deps.maxSteps) throw new MaxStepsError(deps.maxSteps);
    if (stepped && Date.now() >= deps.deadline) return { state, outcome: 'continue' };
    deps.signal.throwIfAborted();
    deps.beforeModelCall?.(state);
    state = await step(state, deps);
    await deps.onStep(state);
  }
  return { state, outcome: 'done' };
}

async function step(state: AttemptState, deps: StepDeps): Promise<AttemptState> {
  const { redactor } = deps;
  let seq = state.next_seq;
  const nextId = () => spanId(state.session_position, state.attempt, seq++);
  const request = {
    model: deps.model,
    ...(state.system !== undefined ? { system: state.system } : {}),
    messages: state.messages,
    tools: deps.tools.map(({ name, description, parameters }) => ({ name, description, parameters })),
    ...(deps.responseFormat ? { responseFormat: deps.responseFormat } : {}),
  };

  const modelSpan = nextId();
  await deps.spans.start({ id: modelSpan, type: 'model_call', name: redactor.redact(deps.model), parent_id: null, input: redactor.redact(deps.provider.body(request)) });
  let response: ModelResponse;
  try {
    response = await deps.provider.complete(request, callSignal(deps.signal));
  } catch (error) {
    await deps.spans.end(modelSpan, { status: 'FAILED', output: redactor.redact({ error: messageOf(error) }), usage: null });
    throw error;
  }
  await deps.spans.end(modelSpan, { status: 'SUCCEEDED', output: redactor.redact(response.response), usage: response.usage });

  const usage = {
    input_tokens: state.usage.input_tokens + response.usage.input_tokens,
    output_tokens: state.usage.output_tokens + response.usage.output_tokens,
  };
  // What a step adds to the conversation is redacted (the tools still get the arguments
  // as the model wrote them): no secret value is ever checkpointed or sent back to the model.
  const said: ConversationMessage = { role: 'assistant', content: response.text, ...(response.toolCalls.length ? { tool_calls: response.toolCalls } : {}) };
  const messages = [...state.messages, redactor.redact(said)];
  let answer: string | null = null;
  if (response.toolCalls.length === 0) {
    const text = response.text ?? '';
    const problem = deps.validateAnswer?.(text);
    if (problem === undefined) answer = redactor.redact(text);
    else messages.push({ role: 'user', content: problem });
  }
  // One after another, in the order asked: tools may share a working directory.
  for (const call of response.toolCalls) {
    const content = await runTool(call, nextId(), modelSpan, deps);
    // The id is redacted as in the assistant message above, so the two still match.
    messages.push(redactor.redact({ role: 'tool', tool_call_id: call.id, content }));
  }

  const next: AttemptState = { ...state, messages, steps: state.steps + 1, next_seq: seq, usage, answer };
  deps.log?.info('agent step', redactor.redact({ span_id: modelSpan, step: next.steps, tool_calls: response.toolCalls.length, done: answer !== null }));
  return next;
}

/** Runs one requested tool call under its own span; returns the tool result text for the model. */
async function runTool(call: ToolCall, id: string, parentId: string, deps: StepDeps): Promise<string> {
  const { redactor } = deps;
  const args = parseArguments(call.arguments);
  await deps.spans.start({
    id,
    type: 'tool_call',
    name: redactor.redact(call.name),
    parent_id: parentId,
    input: redactor.redact(args.ok ? args.value : call.arguments),
  });
  let result: unknown;
  try {
    if (!args.ok) throw new Error(`the arguments are not valid JSON: ${args.error}`);
    const tool = deps.tools.find((t) => t.name === call.name);
    if (!tool) throw new Error(`unknown tool "${call.name}"; the available tools are: ${deps.tools.map((t) => t.name).join(', ') || '(none)'}`);
    result = redactor.redact((await tool.call(args.value, { signal: callSignal(deps.signal) })) ?? null);
  } catch (error) {
    const failure = redactor.redact({ error: messageOf(error) });
    await deps.spans.end(id, { status: 'FAILED', output: failure, usage: null });
    // A tool cut short by the attempt stopping is not a result to show the model.
    deps.signal.throwIfAborted();
    deps.log?.warn('tool call failed', redactor.redact({ span_id: id, tool: call.name, error: failure.error }));
    return JSON.stringify(failure);
  }
  // Outside the try: a span that cannot be written ends the attempt, it is no tool failure.
  await deps.spans.end(id, { status: 'SUCCEEDED', output: result, usage: null });
  return typeof result === 'string' ? result : JSON.stringify(result);
}

/**
 * A signal of its own for one call, following the attempt's: SDKs add an abort listener
 * per request and never remove it, which on the attempt's signal would pile up step after step.
 */
function callSignal(signal: AbortSignal): AbortSignal {
  return AbortSignal.any([signal]);
}

function parseArguments(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  // Some models send no arguments at all for a tool without parameters.
  if (text.trim() === '') return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, error: messageOf(error) };
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
