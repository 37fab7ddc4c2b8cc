/**
 * Memory generation `session`: once an attempt has its final answer, one more model call
 * through the same provider distils durable facts from the conversation into memories of
 * the group. The call is a `model_call` span of the attempt like any other, so the trace
 * shows it. The answer is already final, so a failed distillation (the provider fails,
 * its answer holds no JSON list, or storage fails) does not fail the invocation: the
 * span shows FAILED when the call or its answer failed, and a warning is logged. An invocation is distilled at most once: the memories are written
 * in one transaction with a mark on the invocation, which a retried slice or a later
 * attempt finds first.
 */
import type { AttemptState } from '#functions/agent/loop';
import { spanId, type ConversationMessage, type ModelProvider, type ModelResponse, type Redactor, type SpanRecorder } from '#functions/agent/types';
import type { GroupMemory } from '#functions/agent/tools/types';
import { InvocationEndedError } from './errors';
import type { Logger } from '#kit/log';
import { MAX_MEMORY_CHARS, PROMPT_MEMORIES, withinBudget } from '#functions/agent/tools/memory';

/** The most memories one invocation's distillation stores. */
export const MAX_DISTILLED = 10;
// The conversation shown to the distiller: the newest part, this many characters at most.
const TRANSCRIPT_CHARS = 60_000;
const MESSAGE_CHARS = 8_000;

const SYSTEM_PROMPT = [
  'You maintain the long-term memory shared by a group of AI agents.',
  'Read the conversation and extract the durable facts worth remembering in later conversations:',
  "stable facts about the user or their work, their preferences, decisions taken, and lasting results.",
  'Leave out small talk, one-off details, anything the existing memories already say, and never include credentials or secret values.',
  `Answer with only a JSON array of strings, each one self-contained memory, at most ${MAX_DISTILLED}; answer [] when nothing is worth remembering.`,
].join(' ');

/** The memory group as the distillation of one running invocation sees it. */
export interface DistillationStore {
  /** Whether this invocation's memories were distilled already. */
  distilled(): Promise<boolean>;
  /** The group's newest active memories, at most `limit`. */
  active(limit: number): Promise<GroupMemory[]>;
  /**
   * Writes the distilled memories with the invocation's mark, in one step that holds only
   * while the invocation runs (InvocationEndedError otherwise); `distilled_before` when
   * the mark was there already.
   */
  writeDistilled(contents: string[]): Promise<{ written: number } | 'distilled_before'>;
}

export interface DistillDeps {
  memories: DistillationStore;
  provider: ModelProvider;
  model: string;
  spans: SpanRecorder;
  redactor: Redactor;
  signal: AbortSignal;
  log?: Logger;
}

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text);

function render(message: ConversationMessage): string {
  switch (message.role) {
    case 'user':
      return `USER: ${clip(message.content, MESSAGE_CHARS)}`;
    case 'tool':
      return `TOOL RESULT: ${clip(message.content, MESSAGE_CHARS)}`;
    case 'assistant': {
      const calls = (message.tool_calls ?? []).map((call) => `ASSISTANT called ${call.name}(${clip(call.arguments, MESSAGE_CHARS)})`);
      return [...(message.content ? [`ASSISTANT: ${clip(message.content, MESSAGE_CHARS)}`] : []), ...calls].join('\n');
    }
  }
}

/** The conversation as text, its newest part within the budget. */
function transcript(messages: ConversationMessage[]): string {
  const parts: string[] = [];
  let size = 0;
  for (const message of [...messages].reverse()) {
    const text = render(message);
    if (size + text.length > TRANSCRIPT_CHARS && parts.length) break;
    parts.unshift(text);
    size += text.length + 2;
  }
  return parts.join('\n\n');
}

function prompt(messages: ConversationMessage[], existing: string[]): string {
  return [
    '<existing_memories>',
    ...(existing.length ? existing.map((content) => `- ${content}`) : ['(none)']),
    '</existing_memories>',
    '',
    '<conversation>',
    transcript(messages),
    '</conversation>',
    '',
    'Answer with the JSON array of new memories.',
  ].join('\n');
}

function memoriesOf(value: unknown): unknown[] | undefined {
  if (Array.isArray(value)) return value;
  if (value !== null && typeof value === 'object') {
    const list = Object.values(value).find(Array.isArray);
    return list as unknown[] | undefined;
  }
  return undefined;
}

/**
 * The memories in a distiller's answer, read leniently: a JSON array (or an object holding
 * one, e.g. `{"memories": [...]}`), perhaps inside a code fence or surrounded by prose,
 * of strings or of objects with a `content`, `memory` or `fact` string. Undefined when
 * the answer holds no such list; at most MAX_DISTILLED, each cut to MAX_MEMORY_CHARS.
 */
export function parseMemoryList(text: string): string[] | undefined {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text)?.[1];
  const candidates = [text, fenced, text.slice(text.indexOf('['), text.lastIndexOf(']') + 1), text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1)];
  for (const candidate of candidates) {
    if (!candidate?.trim()) continue;
    let items: unknown[] | undefined;
    try {
      items = memoriesOf(JSON.parse(candidate));
    } catch {
      continue;
    }
    if (!items) continue;
    const contents = items
      .map((item) => {
        if (typeof item === 'string') return item;
        const record = (item ?? {}) as Record<string, unknown>;
        return [record.content, record.memory, record.fact].find((field) => typeof field === 'string') as string | undefined;
      })
      .map((content) => content?.trim() ?? '')
      .filter((content) => content !== '')
      .map((content) => content.slice(0, MAX_MEMORY_CHARS));
    return [...new Set(contents)].slice(0, MAX_DISTILLED);
  }
  return undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Distils the finished attempt's conversation into memories of the group. Returns the
 * state to checkpoint: its span sequence and usage include the distillation call. Any
 * failure is logged and the answer stands; it throws only when the invocation ended or
 * the attempt is being stopped.
 */
export async function distillMemories(state: AttemptState, deps: DistillDeps): Promise<AttemptState> {
  const { memories, redactor, log } = deps;
  // What to checkpoint, as far as the distillation got.
  let next = state;
  const warn = (error: string, spanId?: string) =>
    log?.warn('memory distillation failed; the invocation keeps its answer', redactor.redact({ span_id: spanId, error }));
  try {
    if (await memories.distilled()) return state;
    const existing = withinBudget(await memories.active(PROMPT_MEMORIES)).map((memory) => memory.content);
    const request = {
      model: deps.model,
      system: SYSTEM_PROMPT,
      messages: [{ role: 'user' as const, content: prompt(state.messages, existing) }],
      tools: [],
    };
    const id = spanId(state.session_position, state.attempt, state.next_seq);
    await deps.spans.start({ id, type: 'model_call', name: redactor.redact(deps.model), parent_id: null, input: redactor.redact(deps.provider.body(request)) });
    next = { ...state, next_seq: state.next_seq + 1 };
    let response: ModelResponse;
    try {
      response = await deps.provider.complete(request, deps.signal);
    } catch (error) {
      deps.signal.throwIfAborted();
      await deps.spans.end(id, { status: 'FAILED', output: redactor.redact({ error: messageOf(error) }), usage: null });
      warn(messageOf(error), id);
      return next;
    }
    next = {
      ...next,
      usage: {
        input_tokens: state.usage.input_tokens + response.usage.input_tokens,
        output_tokens: state.usage.output_tokens + response.usage.output_tokens,
      },
    };
    const contents = parseMemoryList(response.text ?? '');
    if (!contents) {
      const problem = 'the distillation answer is not a JSON list of memories';
      await deps.spans.end(id, { status: 'FAILED', output: redactor.redact({ error: problem, response: response.response }), usage: response.usage });
      warn(problem, id);
      return next;
    }
    await deps.spans.end(id, { status: 'SUCCEEDED', output: redactor.redact(response.response), usage: response.usage });
    const result = await memories.writeDistilled(contents.map((content) => redactor.redact(content)));
    if (result !== 'distilled_before') log?.info('memories distilled', { span_id: id, count: result.written });
    else log?.info('memories of this invocation were distilled already', { span_id: id });
    return next;
  } catch (error) {
    if (error instanceof InvocationEndedError) throw error;
    deps.signal.throwIfAborted();
    // Storage failing here must not cost the answer: a new attempt would run the agent again.
    warn(messageOf(error));
    return next;
  }
}
